// Validates conversation options on the client, before anything reaches Temporal, so a bad call gets a
// precise error and starts nothing.
import { z } from 'zod';
import type { ConversationOptionsInput } from '../workflows/api';

const duration = z.union([
  z.string().regex(/^\d+(\.\d+)?\s*(ms|milliseconds?|s|seconds?|m|minutes?|h|hours?|d|days?)$/i, 'must be a duration like "30 seconds"'),
]);

const toolName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'tool names match ^[a-zA-Z0-9_-]{1,64}$');

export function conversationOptionsSchema(knownTools: readonly string[]) {
  const known = z.string().refine((name) => knownTools.includes(name), {
    error: (issue) => `unknown tool "${String(issue.input)}"; known tools: ${knownTools.join(', ')}`,
  });
  return z.strictObject({
    model: z.string().trim().min(1).optional(),
    system: z.string().max(200_000).optional(),
    tools: z.array(toolName.pipe(known)).max(64).refine((names) => new Set(names).size === names.length, 'tools are listed twice').optional(),
    protocol: z.enum(['native', 'legacy-xml']).optional(),
    toolChoice: z.discriminatedUnion('type', [
      z.strictObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
      z.strictObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
      z.strictObject({ type: z.literal('none') }),
      z.strictObject({ type: z.literal('tool'), name: toolName, disable_parallel_tool_use: z.boolean().optional() }),
    ]).optional(),
    disableParallelToolUse: z.boolean().optional(),
    maxTokens: z.number().int().positive().max(128_000).optional(),
    maxTokensCap: z.number().int().positive().max(128_000).optional(),
    // Sampling parameters are gone from the Messages API (version 2026-10-21; SDK 1.x): say so instead of a 400 later.
    temperature: z.never({ error: 'temperature is no longer accepted by the Messages API (API version 2026-10-21)' }).optional(),
    promptCaching: z.boolean().optional(),
    limits: z.strictObject({
      maxModelCallsPerTurn: z.number().int().positive().optional(),
      maxToolCallsPerTurn: z.number().int().positive().optional(),
      maxTranscriptChars: z.number().int().positive().max(1_800_000, 'must stay under the 2 MB payload limit').optional(),
    }).optional(),
    timeouts: z.strictObject({
      idle: duration.optional(),
      approval: duration.optional(),
      modelCall: duration.optional(),
      modelHeartbeat: duration.optional(),
    }).optional(),
    closeAfterFirstReply: z.boolean().optional(),
    continueAsNewAfterModelCalls: z.number().int().positive().optional(),
  }).superRefine((options, ctx) => {
    const choice = options.toolChoice;
    if (choice?.type === 'tool' && !(options.tools ?? []).includes(choice.name)) {
      ctx.addIssue({ code: 'custom', path: ['toolChoice', 'name'], message: `tool_choice names "${choice.name}", which is not in tools` });
    }
    if ((choice?.type === 'any' || choice?.type === 'tool') && (options.tools ?? []).length === 0) {
      ctx.addIssue({ code: 'custom', path: ['toolChoice'], message: `tool_choice "${choice.type}" needs at least one tool` });
    }
    if (options.maxTokens && options.maxTokensCap && options.maxTokens > options.maxTokensCap) {
      ctx.addIssue({ code: 'custom', path: ['maxTokens'], message: 'maxTokens is above maxTokensCap' });
    }
  }) satisfies z.ZodType<ConversationOptionsInput>;
}
