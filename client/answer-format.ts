// Typed answers on the client side: the caller gives a zod schema, the conversation gets its JSON Schema
// (`z.toJSONSchema`, the input side: what the model must write), and the caller gets the answer parsed again with its
// own schema, so transforms and defaults apply and the value has the schema's type.
import { z } from 'zod';
import type { TurnResult } from '../common/conversation-types';
import { describeIssues } from '../common/options';
import { type OutputMode, type OutputSpec, outputSpecSchema } from '../common/structured-output';
import { ConversationError } from './errors';

/** A typed answer as a caller asks for it: a zod schema (or a JSON Schema already made), and the mechanism. */
export interface AnswerFormat<S extends z.ZodType = z.ZodType> {
  /**
   * The answer's shape: a zod schema (the result's `output` is then parsed by it, and typed), or a JSON Schema.
   * @example z.object({ symbol: z.string(), price: z.number() })
   */
  schema: S | Record<string, unknown>;
  /**
   * `native`: the Messages API's structured outputs. `tool`: an answer tool, for any model or gateway.
   * @default 'native'
   * @example 'tool'
   */
  mode?: OutputMode;
  /**
   * The answer tool's name in mode `tool`.
   * @default 'final_answer'
   * @example 'submit_quote'
   */
  toolName?: string;
}

/** A turn's result with its answer parsed by the caller's schema. */
export type TypedTurnResult<T> = TurnResult & { output: T };

function isZodSchema(schema: unknown): schema is z.ZodType {
  return schema instanceof z.ZodType;
}

/** The conversation's (JSON) form of an answer format; a schema that cannot be one is `invalid_options`. */
export function outputSpecOf(format: AnswerFormat): OutputSpec {
  let schema: unknown = format.schema;
  if (isZodSchema(schema)) {
    try {
      schema = z.toJSONSchema(schema, { io: 'input' });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new ConversationError('invalid_options', `Invalid answer schema: it has no JSON Schema form (${reason}).`);
    }
  }
  const parsed = outputSpecSchema.safeParse({ ...format, schema });
  if (!parsed.success) {
    throw new ConversationError('invalid_options', `Invalid answer schema: ${describeIssues(parsed.error, 'output')}`);
  }
  return parsed.data;
}

/** The turn's answer through the caller's zod schema (the workflow checked it against the JSON Schema already). */
export function typedResult<S extends z.ZodType>(
  result: TurnResult,
  format: AnswerFormat<S>,
): TypedTurnResult<z.output<S>> {
  if (!('output' in result)) {
    // The turn ended before an answer came (a limit, a refusal, the budget): there is no value of the asked type.
    throw new ConversationError(
      'turn_failed',
      `The turn ended ${result.status} without an answer: ${result.text}`,
      result.status,
    );
  }
  if (!isZodSchema(format.schema)) return result as TypedTurnResult<z.output<S>>;
  const parsed = format.schema.safeParse(result.output);
  if (!parsed.success) {
    // The JSON Schema lost a rule of the zod schema (a refinement): the answer is there, but not of the asked type.
    throw new ConversationError(
      'turn_failed',
      `The answer does not match the zod schema: ${describeIssues(parsed.error, 'output')}`,
      'invalid_output',
    );
  }
  return { ...result, output: parsed.data as z.output<S> };
}
