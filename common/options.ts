// A conversation's options: one zod schema, with the defaults, for every side. The client checks a call with it
// before anything reaches Temporal; the workflow checks its own input with it again (the Temporal CLI and the Web
// UI can start a workflow with anything), so an option that passes here cannot make a workflow task fail later.
import { z } from 'zod';
import { MAX_AGENT_CALLS_PER_REPLY, MAX_AGENT_DEPTH } from './agent-limits';
import { DEFAULT_MAX_RESULT_CHARS } from './bounded-text';
import { fallbackAfterAttemptsSchema, fallbackModelsSchema } from './fallback-models';
import { budgetSchema } from './budget';
import { checkContextManagement, contextManagementSchema } from './context-options';
import { modelOutputCap } from './max-tokens-ladder';
import { mcpServersOptionSchema } from './mcp';
import { modelPricesSchema } from './pricing';
import { serverToolsProblems, serverToolsSchema } from './server-tools';
import { outputConflict, outputSpecSchema } from './structured-output';
import { effortSchema, thinkingOptionSchema, thinkingProblems } from './thinking';
import { sharedOnce } from './shared-once';
import { batchOptionSchema } from './batch-mode';

export const DEFAULT_MODEL = 'claude-sonnet-5-5';

/** The Messages API's rule for tool names. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Temporal's payload limit is 2 MB; a run hands its state to the next in one payload, so it must stay below. */
export const MAX_CARRIED_BYTES = 1_800_000;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d{1,9}(?:\.\d{1,3})?)\s*(ms|milliseconds?|s|seconds?|m|minutes?|h|hours?|d|days?)$/i;

/** Milliseconds of a duration like `"30 seconds"` or `"2h"`, or undefined when it is not one. */
export function durationMs(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  const unit = match[2]!.toLowerCase();
  const key = unit.startsWith('ms') || unit.startsWith('milli') ? 'ms' : unit[0]!;
  return Number(match[1]) * UNIT_MS[key]!;
}

/** A duration between `min` and `max`, both in milliseconds. */
function duration(min: number, max: number) {
  return z.string().superRefine((text, ctx) => {
    const ms = durationMs(text);
    if (ms === undefined) ctx.addIssue({ code: 'custom', message: 'must be a duration like "30 seconds"' });
    else if (ms < min || ms > max) {
      ctx.addIssue({ code: 'custom', message: `must be between ${min / 1000} seconds and ${max / 86_400_000} days` });
    }
  });
}

const SECOND = 1_000;
const DAY = 86_400_000;
const toolName = sharedOnce('options.toolName', () =>
  z.string().regex(TOOL_NAME, 'tool names match ^[a-zA-Z0-9_-]{1,64}$'),
);

export const toolChoiceSchema = sharedOnce('options.toolChoiceSchema', () =>
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
    z.strictObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
    z.strictObject({ type: z.literal('none') }),
    z.strictObject({ type: z.literal('tool'), name: toolName, disable_parallel_tool_use: z.boolean().optional() }),
  ]),
);

export const conversationOptionsSchema = sharedOnce('options.conversationOptionsSchema', () =>
  z
    .strictObject({
      /**
       * The model every call of the conversation goes to (the Messages API's model id).
       * @default 'claude-sonnet-5-5' (DEFAULT_MODEL)
       * @example 'claude-opus-5-5'
       */
      model: z.string().trim().min(1).max(256).default(DEFAULT_MODEL),
      /**
       * Models to try in order when a model call stays overloaded (common/fallback-models.ts): after
       * `fallbackAfterAttempts` overloaded attempts on one model, the same call goes to the next, as an activity of its own.
       * At most 4.
       * @default none: an overloaded model is retried
       * @example ['claude-opus-5-5', 'claude-haiku-4-5']
       */
      fallbackModels: fallbackModelsSchema.optional(),
      /**
       * Attempts of one call on one model before it falls back; only with fallbackModels.
       * @default 3
       */
      fallbackAfterAttempts: fallbackAfterAttemptsSchema.optional(),
      /**
       * The system prompt (up to 200,000 characters).
       * @default none
       * @example 'You are a financial assistant. Answer with figures from the tools only.'
       */
      system: z.string().max(200_000).optional(),
      /**
       * Names of tools the workers register; the conversation may use only these (at most 64).
       * @default [] (no tools)
       * @example ['get_ticker_symbol', 'get_current_stock_price']
       */
      tools: z
        .array(toolName)
        .max(64)
        .refine((names) => new Set(names).size === names.length, 'tools are listed twice')
        .default([]),
      /**
       * MCP servers the workers are configured with whose tools the conversation may use (common/mcp.ts): a server's
       * name for all its tools, or `{ server, tools }` for some of them.
       * @default []
       * @example ['memory', { server: 'filesystem', tools: ['read_file', 'list_directory'] }]
       */
      mcpServers: mcpServersOptionSchema,
      /**
       * How tools are offered to the model: the API's `tools` and `tool_use` blocks (`native`), or described in the system
       * prompt and called in `<function_calls>` XML (`legacy-xml`, for models or gateways without tool use).
       * @default 'native'
       */
      protocol: z.enum(['native', 'legacy-xml']).default('native'),
      /**
       * The request's `tool_choice`. `any` and `tool` force a tool on the first model call of each user turn; later calls
       * of the turn use `auto`.
       * @default none: the API's `auto`
       * @example { type: 'tool', name: 'get_ticker_symbol' }
       */
      toolChoice: toolChoiceSchema.optional(),
      /**
       * At most one tool call per reply (the request's `disable_parallel_tool_use`).
       * @default none: the API's default, parallel tool calls allowed
       */
      disableParallelToolUse: z.boolean().optional(),
      /**
       * `max_tokens` of the first attempt; a reply cut off by it is asked again higher up the ladder.
       * @default 1024
       */
      maxTokens: z.number().int().positive().max(128_000).default(1024),
      /**
       * The top of the `max_tokens` ladder.
       * @default the model's output cap
       * @example 16_000
       */
      maxTokensCap: z.number().int().positive().max(128_000).optional(),
      // Sampling parameters are gone from the Messages API (version 2026-10-21; SDK 1.x): say so instead of a 400 later.
      temperature: z
        .never({ error: 'temperature is no longer accepted by the Messages API (API version 2026-10-21)' })
        .optional(),
      /**
       * The request's `thinking` (common/thinking.ts): `adaptive`, `enabled` with `budget_tokens` (≥ 1,024 and below
       * max_tokens on every rung), `disabled`, `between_tools`; `display: summarized | omitted`. Omitted: the model's
       * default (Claude Sonnet 5.5 thinks adaptively by default).
       * @default none: the model's default
       * @example { type: 'adaptive', display: 'summarized' }
       */
      thinking: thinkingOptionSchema.optional(),
      /**
       * The request's `output_config.effort`: `low` … `max`.
       * @default none: the model's default
       * @example 'high'
       */
      effort: effortSchema.optional(),
      /**
       * The API's server tools (common/server-tools.ts): `webSearch`, `webFetch`, `codeExecution` (its container carried
       * across turns), `toolSearch` (the tools it defers stay out of every request until the model finds them).
       * @default none
       * @example { webSearch: { maxUses: 5 } }
       */
      serverTools: serverToolsSchema.optional(),
      /**
       * Cache breakpoints on tools, system prompt and the newest turn (prompt caching).
       * @default true
       */
      promptCaching: z.boolean().default(true),
      /**
       * Message threads (beta, docs/threads.md): the API holds the conversation between calls, so each call sends only
       * what its turn added. A call the API cannot thread (thinking, context management) goes whole.
       * @default false
       */
      threads: z.boolean().optional(),
      /**
       * Batch mode (docs/batches.md): each model call goes through the Message Batches API, at half the price, and the
       * conversation waits for its result durably (no worker holds anything meanwhile); tools run as usual between
       * calls. Replies do not stream. `{ windowMs }`: wait at most that long for other calls of the worker to share
       * a batch (default: the worker's window, 2 s). A message's own `batch` option wins for its turn.
       * @default false
       * @example { windowMs: 5_000 }
       */
      batch: batchOptionSchema.optional(),
      /** Limits of one turn and of what a run carries; past one, the turn or the conversation ends with `limit_reached`. */
      limits: z
        .strictObject({
          /**
           * Model calls for one user message before the turn ends with `limit_reached`.
           * @default 50
           */
          maxModelCallsPerTurn: z.number().int().positive().max(100_000).default(50),
          /**
           * Tool executions for one user message before the turn ends with `limit_reached`.
           * @default 200
           */
          maxToolCallsPerTurn: z.number().int().positive().max(100_000).default(200),
          /**
           * Characters of one tool result or error (and of any other text the orchestrator writes) in the transcript;
           * past it the text is cut with a marker. The worker's `maxOutputChars` (same default) cuts before it.
           * @default 100_000
           */
          maxResultChars: z.number().int().min(1_000).max(1_000_000).default(DEFAULT_MAX_RESULT_CHARS),
          /**
           * What a run carries to the next at continue-as-new (transcript, queued messages, kept results, system
           * prompt), in UTF-8 bytes of JSON; past it the conversation ends with `limit_reached`. At most 1,800,000.
           * @default 1_500_000
           */
          maxCarriedBytes: z
            .number()
            .int()
            .min(10_000)
            .max(MAX_CARRIED_BYTES, 'must stay under the 2 MB payload limit')
            .default(1_500_000),
          /**
           * How deep sub-agents (agent tools) may nest under this conversation: 1 lets its own agent tools run, but
           * not theirs. Only a root conversation's counts; its children hand it down.
           * @default 2
           */
          maxAgentDepth: z.number().int().min(1).max(MAX_AGENT_DEPTH).optional(),
          /**
           * Sub-agents one reply may start; the reply's further agent calls get an error result.
           * @default 4
           */
          maxAgentCallsPerReply: z.number().int().min(1).max(MAX_AGENT_CALLS_PER_REPLY).optional(),
        })
        .prefault({}),
      /** Durations, written like `'30 seconds'`, `'2h'` or `'7 days'`. */
      timeouts: z
        .strictObject({
          /**
           * How long an open conversation waits for the next user message before it closes (1 second to 3,650 days).
           * @default '24 hours'
           * @example '7 days'
           */
          idle: duration(SECOND, 3650 * DAY).default('24 hours'),
          /**
           * How long a tool call that needs approval waits for a person (1 second to 365 days).
           * @default '1 hour'
           */
          approval: duration(SECOND, 365 * DAY).default('1 hour'),
          /**
           * One model call (one attempt)… (1 second to 1 day)
           * @default '10 minutes'
           */
          modelCall: duration(SECOND, DAY).default('10 minutes'),
          /**
           * …and how often it must show signs of life while streaming (1 second to 1 day).
           * @default '30 seconds'
           */
          modelHeartbeat: duration(SECOND, DAY).default('30 seconds'),
        })
        .prefault({}),
      /**
       * Let readers see the model's reply as it is written (text, tool calls as they start): the model activity
       * heartbeats the reply so far, which is not recorded in the history. Off, readers get each reply once it is final.
       */
      streaming: z
        .strictObject({
          /** @default true */
          enabled: z.boolean().default(true),
          /**
           * At most one heartbeat of the live reply per interval, in milliseconds (the worker's heartbeat throttle must
           * allow it).
           * @default 100
           */
          intervalMs: z.number().int().min(50).max(60_000).default(100),
        })
        .prefault({}),
      /**
       * Close the conversation after the first reply (a one-shot question).
       * @default false
       */
      closeAfterFirstReply: z.boolean().default(false),
      /**
       * Continue-as-new after this many model calls in one run even if Temporal does not suggest it yet.
       * @default 1000
       */
      continueAsNewAfterModelCalls: z.number().int().positive().max(10_000).default(1000),
      /**
       * Keeping the model's context inside its window: off, context editing, compaction or both (context-options.ts).
       * @default { mode: 'off' }
       * @example { mode: 'compaction', compaction: { triggerTokens: 100_000 } }
       */
      contextManagement: contextManagementSchema,
      /**
       * Every turn's final answer as data matching this JSON Schema (common/structured-output.ts); the client's `output`
       * option (an AnswerFormat) makes it from a zod schema.
       * @default none: answers are text
       * @example { schema: { type: 'object', properties: { price: { type: 'number' } }, required: ['price'] } }
       */
      output: outputSpecSchema.optional(),
      /**
       * The model's prices (USD per million tokens), instead of the worker's or the published ones (pricing.ts).
       * @default the worker's (modelPrices, MODEL_PRICES), else the published ones
       * @example { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 }
       */
      prices: modelPricesSchema.optional(),
      /**
       * Limits in tokens and/or USD per turn and per conversation, checked before every model call (budget.ts).
       * @default none
       * @example { perTurn: { usd: 0.5 }, perConversation: { tokens: 2_000_000 } }
       */
      budget: budgetSchema,
    })
    .superRefine((options, ctx) => {
      const choice = options.toolChoice;
      // An MCP tool's name is `server__tool`; whether the server has it is known once its tools are listed.
      const ofMcpServer = (name: string) => options.mcpServers.some(({ server }) => name.startsWith(`${server}__`));
      if (choice?.type === 'tool' && !options.tools.includes(choice.name) && !ofMcpServer(choice.name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['toolChoice', 'name'],
          message: `tool_choice names "${choice.name}", which is not in tools nor a tool of mcpServers`,
        });
      }
      if (
        (choice?.type === 'any' || choice?.type === 'tool') &&
        options.tools.length === 0 &&
        options.mcpServers.length === 0
      ) {
        ctx.addIssue({
          code: 'custom',
          path: ['toolChoice'],
          message: `tool_choice "${choice.type}" needs at least one tool`,
        });
      }
      if (options.maxTokensCap !== undefined && options.maxTokens > options.maxTokensCap) {
        ctx.addIssue({ code: 'custom', path: ['maxTokens'], message: 'maxTokens is above maxTokensCap' });
      }
      checkContextManagement(options, ctx);
      const forcesToolChoice = choice?.type === 'any' || choice?.type === 'tool';
      for (const problem of thinkingProblems({
        model: options.model,
        maxTokens: options.maxTokens,
        cap: options.maxTokensCap ?? modelOutputCap(options.model),
        thinking: options.thinking,
        effort: options.effort,
        forcedToolChoice: forcesToolChoice ? 'toolChoice' : undefined,
      })) {
        ctx.addIssue({ code: 'custom', ...problem });
      }
      for (const problem of serverToolsProblems(options)) ctx.addIssue({ code: 'custom', ...problem });
      checkFallbackModels(options, forcesToolChoice, ctx);
      const conflict = outputConflict(options.output, options);
      if (conflict) ctx.addIssue({ code: 'custom', path: ['output'], message: conflict });
    }),
);

/** Every fallback model must take the call as the conversation's model would (thinking, effort, the ladder). */
function checkFallbackModels(
  options: Pick<
    ConversationOptions,
    'model' | 'fallbackModels' | 'fallbackAfterAttempts' | 'maxTokens' | 'maxTokensCap' | 'thinking' | 'effort'
  >,
  forcesToolChoice: boolean,
  ctx: z.RefinementCtx,
): void {
  if (options.fallbackAfterAttempts !== undefined && !options.fallbackModels) {
    ctx.addIssue({
      code: 'custom',
      path: ['fallbackAfterAttempts'],
      message: 'fallbackAfterAttempts needs fallbackModels',
    });
  }
  for (const [index, model] of (options.fallbackModels ?? []).entries()) {
    if (model === options.model) {
      ctx.addIssue({
        code: 'custom',
        path: ['fallbackModels', index],
        message: "a fallback model is the conversation's own model",
      });
    }
    for (const problem of thinkingProblems({
      model,
      maxTokens: options.maxTokens,
      cap: options.maxTokensCap ?? modelOutputCap(model),
      thinking: options.thinking,
      effort: options.effort,
      forcedToolChoice: forcesToolChoice ? 'toolChoice' : undefined,
    })) {
      ctx.addIssue({
        code: 'custom',
        path: ['fallbackModels', index],
        message: `as a fallback model: ${problem.path.join('.')}: ${problem.message}`,
      });
    }
  }
}

/** Options with every default filled in: what a conversation runs with. */
export type ConversationOptions = Omit<z.output<typeof conversationOptionsSchema>, 'temperature'>;
/** Options as a caller writes them: everything optional. */
export type ConversationOptionsInput = z.input<typeof conversationOptionsSchema>;

/** `path: problem; path: problem` — zod's issues as one line a person can act on. */
export function describeIssues(error: z.ZodError, what = 'input'): string {
  return error.issues.map((issue) => `${issue.path.join('.') || what}: ${issue.message}`).join('; ');
}

/** The options with defaults, or throws a readable Error. Pure: the client and tests use it. */
export function withDefaults(input: ConversationOptionsInput = {}): ConversationOptions {
  const parsed = conversationOptionsSchema.safeParse(input);
  if (!parsed.success) throw new Error(`Invalid conversation options: ${describeIssues(parsed.error, 'options')}`);
  return parsed.data;
}
