// Typed answers: a turn may ask for its final answer as data matching a JSON Schema (the client makes it from a zod
// schema). Two mechanisms:
//   native  the Messages API's own structured outputs (`output_config.format`, constrained decoding): the final reply
//           is JSON text. The tools stay offered; the model calls them as usual before it answers.
//   tool    an answer tool whose `input_schema` is the schema, offered next to the real tools. Works with every model
//           and proxy that has tool use.
// Either way the answer is checked against the whole schema (the API enforces only part of a JSON Schema: bounds like
// `minimum` become descriptions), the model is told once what is wrong, and the turn fails with `invalid_output` if
// the second answer is wrong too. Pure and deterministic, and bounded in work units, never in time: the check runs in
// a local activity whose recorded result the workflow reads (workflows/answer-check.ts), and ran in workflow code in
// histories from before that, which replay it here with the budget they had (answer-schema.ts).
import { z } from 'zod';
import { answerSchema, describePath } from './answer-schema';
import { jsonExtentProblem } from './json-extent';
import { boundedText } from './safe-text';
import { forcedToolChoiceProblem, type ThinkingOption } from './thinking';
import { sharedOnce } from './shared-once';

/** The Messages API's rule for tool names (options.ts has the same; this module must not import it: a cycle). */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export const DEFAULT_ANSWER_TOOL = 'final_answer';
/** Answers checked per turn: the first, and one more after the model was told what is wrong. */
export const MAX_ANSWER_ATTEMPTS = 2;
/** A schema is part of every model call's input: keep it small. */
export const MAX_SCHEMA_BYTES = 64_000;

export type OutputMode = 'native' | 'tool';

/** Nesting of the schema document (objects and arrays): every walk of it, here and in the worker, stays shallow. */
export const MAX_SCHEMA_DEPTH = 64;
/** Values in the schema document; counted before anything serialises it. */
export const MAX_SCHEMA_VALUES = 50_000;

/**
 * `output`: an object JSON Schema (what `z.toJSONSchema` makes of a `z.object`) that the workflow can check answers
 * against in bounded time. Measured first without recursion (depth, values), then sized, then built once
 * (answer-schema.ts): a pattern RE2 cannot run, a $ref cycle that never reaches the answer, a keyword zod cannot
 * check are refused here, where the options are checked, never met while an answer is.
 */
const jsonSchemaObject = sharedOnce('structuredOutput.jsonSchemaObject', () =>
  z.record(z.string(), z.unknown()).superRefine((schema, ctx) => {
    const extent = jsonExtentProblem(schema, { maxDepth: MAX_SCHEMA_DEPTH, maxNodes: MAX_SCHEMA_VALUES });
    if (extent) {
      ctx.addIssue({ code: 'custom', message: `the answer schema is too large: ${extent}` });
      return;
    }
    if (schema['type'] !== 'object') {
      ctx.addIssue({
        code: 'custom',
        message: 'the answer schema must describe an object (type "object", e.g. from z.object(...))',
      });
      return;
    }
    const bytes = JSON.stringify(schema).length;
    if (bytes > MAX_SCHEMA_BYTES) {
      ctx.addIssue({
        code: 'custom',
        message: `the answer schema has ${bytes} bytes; the limit is ${MAX_SCHEMA_BYTES}`,
      });
      return;
    }
    const built = answerSchema(schema);
    if (!built.ok) ctx.addIssue({ code: 'custom', message: `the answer schema cannot be used: ${built.error}` });
  }),
);

export const outputSpecSchema = sharedOnce('structuredOutput.outputSpecSchema', () =>
  z.strictObject({
    /** The JSON Schema the answer must match. */
    schema: jsonSchemaObject,
    /**
     * `native` (default): the API's structured outputs. `tool`: an answer tool, for models or gateways without them.
     * The legacy XML protocol has neither `output_config` nor `tool_choice`: typed answers need protocol `native`.
     */
    mode: z.enum(['native', 'tool']).default('native'),
    /** The answer tool's name (mode `tool`); it must not be one of the conversation's tools. */
    toolName: z.string().regex(TOOL_NAME, 'tool names match ^[a-zA-Z0-9_-]{1,64}$').default(DEFAULT_ANSWER_TOOL),
  }),
);

export type OutputSpec = z.output<typeof outputSpecSchema>;
export type OutputSpecInput = z.input<typeof outputSpecSchema>;

/** Why a problem with the combination of typed answers and other options, or undefined when there is none. */
export function outputConflict(
  spec: OutputSpec | undefined,
  options: { protocol: string; tools: readonly string[]; thinking?: ThinkingOption | undefined },
): string | undefined {
  if (!spec) return undefined;
  const forced = spec.mode === 'tool' ? forcedToolChoiceProblem(options.thinking, 'output') : undefined;
  if (forced) return forced;
  if (options.protocol !== 'native') {
    return 'typed answers need protocol "native": the legacy XML protocol has neither output_config nor tool_choice';
  }
  if (spec.mode === 'tool' && options.tools.includes(spec.toolName)) {
    return `the answer tool "${spec.toolName}" has the name of one of the conversation's tools; choose another toolName`;
  }
  return undefined;
}

// ── checking an answer ────────────────────────────────────────────────────────────────────────────────

export type AnswerCheck = { ok: true; value: unknown } | { ok: false; error: string };

/** An answer nested deeper, or bigger, is a wrong answer: measured before anything walks it. */
export const MAX_ANSWER_DEPTH = 64;
export const MAX_ANSWER_VALUES = 100_000;
/** Characters of the answer's JSON (a model's output is bounded by max_tokens; this bounds what is checked). */
export const MAX_ANSWER_CHARS = 1_000_000;
/**
 * Work one check may do, in units of a schema node visited plus the characters a check scans (answer-schema.ts).
 * An honest answer spends a few per value (2.5 for an array of 16,000 small objects, 96,000 values: 240,000 units,
 * 35–80 ms); an answer that needs more cannot be checked in bounded time, so it is wrong. The same verdict on every
 * machine: the budget counts work, not time.
 *
 * The budget of a check in workflow code, which histories from before the local activity replay. It had to stay far
 * under the 5 s a workflow activation may take before the SDK interrupts it (isolateExecutionTimeout), which stops
 * the worker process: 1,000,000 units, 0.4–0.8 s on a loaded machine, came close enough to do so once.
 */
export const ANSWER_CHECK_BUDGET = 300_000;
/**
 * The budget of a check in the local activity (activities/check-answer-activity.ts), where running long is harmless:
 * 20,000 items of a union of 12 tagged objects, each the last one (500,000 units), are checked in 0.3–0.9 s on the
 * 2-core test machine under the suite's load (9 s at a load average of 18: the activity's time limit is for that). It
 * runs on the worker's main thread, between the other activities' heartbeats: keep it near a second.
 */
export const ANSWER_CHECK_ACTIVITY_BUDGET = 1_000_000;

export interface CheckLimits {
  /** Work units the check may spend before the answer counts as wrong (the verdict: deterministic). */
  budget: number;
  /**
   * Called every INTERRUPT_EVERY units; a throw stops the check and leaves it (the activity's deadline: no verdict,
   * the attempt fails and the local activity is tried again).
   */
  interrupt?: () => void;
}
const IN_WORKFLOW: CheckLimits = { budget: ANSWER_CHECK_BUDGET };
/** Units between two calls of `interrupt`: a clock read each 10,000 units costs nothing measurable. */
const INTERRUPT_EVERY = 10_000;
/** What the model is told, and the failure says: the first problems, each shortened. */
const MAX_PROBLEMS = 10;
const MAX_PROBLEM_CHARS = 300;

/** Thrown by the meter when a check has spent its budget; answer-schema.ts lets it through zod. */
class BudgetSpent extends Error {}

/**
 * Checks `value` against the JSON Schema; the error names each problem with its path. Never throws but what
 * `limits.interrupt` throws, and its cost is bounded whatever the answer: too large, too costly or uncheckable is a
 * wrong answer, with the reason.
 */
export function checkAnswer(
  schema: Record<string, unknown>,
  value: unknown,
  limits: CheckLimits = IN_WORKFLOW,
): AnswerCheck {
  const extent = jsonExtentProblem(value, { maxDepth: MAX_ANSWER_DEPTH, maxNodes: MAX_ANSWER_VALUES });
  if (extent) return { ok: false, error: `the answer is too large to check: ${extent}` };
  const chars = (JSON.stringify(value) ?? '').length;
  if (chars > MAX_ANSWER_CHARS) {
    return { ok: false, error: `the answer has ${chars} characters of JSON; the limit is ${MAX_ANSWER_CHARS}` };
  }
  let spent = 0;
  let nextInterrupt = INTERRUPT_EVERY;
  // What `interrupt` threw, if it did: it leaves the check as it was thrown.
  const interruption: { error?: unknown } = {};
  const built = answerSchema(schema, (units) => {
    spent += units;
    if (spent > limits.budget) throw new BudgetSpent();
    if (limits.interrupt && spent >= nextInterrupt) {
      nextInterrupt = spent + INTERRUPT_EVERY;
      try {
        limits.interrupt();
      } catch (error) {
        interruption.error = error;
        throw error;
      }
    }
  });
  if ('error' in interruption) throw interruption.error;
  // Options are checked before a schema is taken; this is a schema from before that check (carried state).
  if (!built.ok) return { ok: false, error: `the answer schema cannot be used: ${built.error}` };
  let parsed: ReturnType<z.ZodType['safeParse']>;
  try {
    parsed = built.schema.safeParse(value);
  } catch (error) {
    if ('error' in interruption) throw interruption.error;
    return {
      ok: false,
      error:
        error instanceof BudgetSpent
          ? 'the answer could not be checked within its budget; give a simpler, smaller answer'
          : `the answer could not be checked (${error instanceof Error ? error.name : 'an error'})`,
    };
  }
  if (parsed.success) return { ok: true, value: parsed.data };
  const issues = parsed.error.issues;
  const problems = issues.slice(0, MAX_PROBLEMS).map((issue) => {
    const where = issue.path.length > 0 ? describePath(issue.path.map(String)) : '(the answer)';
    return boundedText(`${where}: ${issue.message}`, MAX_PROBLEM_CHARS);
  });
  if (issues.length > MAX_PROBLEMS) problems.push(`and ${issues.length - MAX_PROBLEMS} more`);
  return { ok: false, error: problems.join('; ') };
}

/** The native mechanism's answer: the reply's text, which must be JSON matching the schema. */
export function checkTextAnswer(
  schema: Record<string, unknown>,
  text: string,
  limits: CheckLimits = IN_WORKFLOW,
): AnswerCheck {
  if (text.length > MAX_ANSWER_CHARS) {
    return { ok: false, error: `the answer has ${text.length} characters; the limit is ${MAX_ANSWER_CHARS}` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, error: 'the answer is not JSON' };
  }
  return checkAnswer(schema, value, limits);
}

// ── what happens after an answer ──────────────────────────────────────────────────────────────────────

/**
 * After a checked answer: accept it, send it back once with the error, or fail the turn. `attempts` counts the
 * answers checked in this turn, this one included.
 */
export function afterAnswer(check: AnswerCheck, attempts: number): 'accept' | 'retry' | 'fail' {
  if (check.ok) return 'accept';
  return attempts < MAX_ANSWER_ATTEMPTS ? 'retry' : 'fail';
}

/** What the model reads when its answer did not match (a user message in `native`, a tool_result in `tool`). */
export function correctionText(spec: OutputSpec, error: string): string {
  const how =
    spec.mode === 'native'
      ? 'Answer again with JSON only, matching the schema.'
      : `Call ${spec.toolName} again with input matching its schema.`;
  return `Your answer does not match the required schema: ${error}. ${how}`;
}

/** What the model reads when it ended the turn without calling the answer tool. */
export function missingAnswerText(spec: OutputSpec): string {
  return `Give your final answer by calling ${spec.toolName}.`;
}

/** The tool_result of an accepted answer (the transcript needs one before the next user message). */
export const ANSWER_RECEIVED = 'Answer received.';

/** The tool_result of an answer given in the same reply as other tool calls: it is not checked. */
export function answerTooEarlyText(spec: OutputSpec): string {
  return `${spec.toolName} was called together with other tools; call it on its own once you have their results.`;
}

/** The answer tool as the model is told about it (the worker renders it after the conversation's tools). */
export function answerToolDescription(spec: Pick<OutputSpec, 'schema' | 'toolName'>) {
  const { $schema: _dialect, ...inputSchema } = spec.schema;
  return {
    name: spec.toolName,
    description:
      'Give your final answer to the user with this tool, once you have everything you need (call the other tools ' +
      'first). Its input is the answer.',
    input_schema: inputSchema as { type: 'object'; [key: string]: unknown },
  };
}

// ── tool_choice of a typed turn (mode `tool`) ─────────────────────────────────────────────────────────

export type TypedToolChoice = { type: 'any' } | { type: 'tool'; name: string };

/**
 * The tool choice of a model call in a turn that wants its answer from the answer tool:
 *  - after a wrong or missing answer: the answer tool, forced (the one retry is an answer, not more tool calls);
 *  - otherwise `any`: the model must call a tool, the real ones or the answer tool. It can still run a whole tool
 *    chain (ticker → price) first, and it cannot end the turn with prose instead of the answer. Should a reply come
 *    back without any tool call anyway (a gateway that ignores tool_choice), the turn counts it as a missing answer
 *    and forces the answer tool on the next call.
 * A conversation's own forced `toolChoice` (`any`/`tool` on the first call of a turn) still comes first.
 */
export function typedToolChoice(spec: OutputSpec, forceAnswer: boolean): TypedToolChoice {
  return forceAnswer ? { type: 'tool', name: spec.toolName } : { type: 'any' };
}

/**
 * What a model call of a typed turn adds to its request: the spec (the worker renders `output_config.format` or the
 * answer tool from it) and, in mode `tool`, the tool choice. `toolChoice` is the call's choice without a typed answer.
 */
export function typedCallOptions<Choice extends { type: string }>(
  turn: { output?: OutputSpec; forceAnswer?: boolean } | undefined,
  toolChoice: Choice | undefined,
): { output?: OutputSpec; toolChoice?: Choice | TypedToolChoice } {
  const spec = turn?.output;
  if (!spec) return toolChoice ? { toolChoice } : {};
  if (spec.mode === 'native') return { output: spec, ...(toolChoice && { toolChoice }) };
  const conversationForces = toolChoice?.type === 'any' || toolChoice?.type === 'tool';
  const choice =
    conversationForces && !turn.forceAnswer ? toolChoice : typedToolChoice(spec, turn.forceAnswer === true);
  return { output: spec, toolChoice: choice };
}
