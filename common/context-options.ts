// How a conversation keeps its model context inside the context window: the `contextManagement` option (its zod
// schema and defaults) and what it means for a Messages API request. Off by default; when on, the defaults are the
// API's own (compaction at 150,000 input tokens, clearing at 100,000 keeping the last 3 tool uses).
//
// - `clear-tool-uses`: context editing (`clear_tool_uses_20250919`, beta `context-management-2025-06-27`). The API
//   replaces old tool results with a placeholder before the model reads the prompt; the transcript stays whole.
// - `compaction`: compaction. By the API (`compact_20260112`, beta `compact-2026-01-12`): past the trigger it summarises
//   the conversation into a `compaction` block at the head of its reply, and the transcript keeps only that reply and
//   what follows. By the orchestrator (`by: 'orchestrator'`, for a model or endpoint without it): one extra model
//   call summarises the older messages, which give way to the summary.
// - `both`: clearing first, compaction when clearing is not enough.
//
// Not used: on-demand compaction (beta `compact-2026-09-04`, a top-level `compaction: {type: 'summarize'}` request that
// returns the block alone). The API refuses it together with a `compact_20260112` edit, and threshold compaction needs
// no extra request.
import type {
  BetaClearToolUses20250919Edit,
  BetaCompact20260112Edit,
  BetaContextManagementConfig,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { z } from 'zod';
import { sharedOnce } from './shared-once';

export const COMPACTION_BETA = 'compact-2026-01-12';
export const CONTEXT_EDITING_BETA = 'context-management-2025-06-27';
/** The API refuses a compaction trigger below this many input tokens. */
export const MIN_API_COMPACTION_TRIGGER = 50_000;

const toolName = sharedOnce('contextOptions.toolName', () =>
  z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'tool names match ^[a-zA-Z0-9_-]{1,64}$'),
);
const tokens = (min: number) => z.number().int().min(min).max(10_000_000);

export const contextManagementSchema = sharedOnce('contextOptions.contextManagementSchema', () =>
  z
    .strictObject({
      /**
       * `clear-tool-uses`: the API clears old tool results; `compaction`: the context is summarised past a trigger;
       * `both`: clearing first, compaction when it is not enough.
       * @default 'off'
       */
      mode: z.enum(['off', 'clear-tool-uses', 'compaction', 'both']).default('off'),
      compaction: z
        .strictObject({
          /**
           * Who summarises: the Messages API, or the orchestrator with a model call of its own.
           * @default 'api'
           */
          by: z.enum(['api', 'orchestrator']).default('api'),
          /**
           * Compact once a call's input reaches this many tokens (at least 50,000 with `by: 'api'`).
           * @default 150_000
           */
          triggerTokens: tokens(1_000).default(150_000),
          /**
           * Replaces the summarisation prompt (the API's, or the orchestrator's own).
           * @default none: the API's or the orchestrator's own prompt
           */
          instructions: z.string().trim().min(1).max(20_000).optional(),
          /**
           * `max_tokens` of the orchestrator's summary call.
           * @default 4_096
           */
          summaryMaxTokens: z.number().int().min(256).max(64_000).default(4_096),
        })
        .prefault({}),
      clearToolUses: z
        .strictObject({
          /**
           * Clear once a call's input reaches this many tokens…
           * @default 100_000, when `triggerToolUses` is not given
           */
          triggerTokens: tokens(1).optional(),
          /**
           * …or once the prompt holds this many tool uses (instead of `triggerTokens`).
           * @default none
           */
          triggerToolUses: z.number().int().min(1).max(100_000).optional(),
          /**
           * The most recent tool uses whose results are kept.
           * @default 3
           */
          keepToolUses: z.number().int().min(0).max(100_000).default(3),
          /**
           * Clear only when at least this many tokens go (clearing invalidates the prompt cache from there on).
           * @default none: the API's
           */
          clearAtLeastTokens: tokens(1).optional(),
          /**
           * Tools whose results are never cleared.
           * @default none
           * @example ['get_current_stock_price']
           */
          excludeTools: z.array(toolName).max(64).optional(),
          /**
           * Clear the calls' inputs too, not only their results.
           * @default none: the API's (results only)
           */
          clearToolInputs: z.boolean().optional(),
        })
        .refine((c) => c.triggerTokens === undefined || c.triggerToolUses === undefined, {
          message: 'give triggerTokens or triggerToolUses, not both',
        })
        .prefault({}),
    })
    .prefault({}),
);

export type ContextManagementOptions = z.output<typeof contextManagementSchema>;

/** The default clearing trigger, in input tokens (the API's). */
export const DEFAULT_CLEAR_TRIGGER_TOKENS = 100_000;

export function compacting(options: ContextManagementOptions): boolean {
  return options.mode === 'compaction' || options.mode === 'both';
}

export function clearingToolUses(options: ContextManagementOptions): boolean {
  return options.mode === 'clear-tool-uses' || options.mode === 'both';
}

/** The orchestrator summarises the context itself (no compaction edit goes to the API). */
export function summarisingItself(options: ContextManagementOptions): boolean {
  return compacting(options) && options.compaction.by === 'orchestrator';
}

/** The rules that need the rest of the options; called from the options schema's superRefine. */
export function checkContextManagement(
  options: { contextManagement: ContextManagementOptions; protocol: string },
  ctx: z.RefinementCtx,
): void {
  const context = options.contextManagement;
  if (
    compacting(context) &&
    context.compaction.by === 'api' &&
    context.compaction.triggerTokens < MIN_API_COMPACTION_TRIGGER
  ) {
    ctx.addIssue({
      code: 'custom',
      path: ['contextManagement', 'compaction', 'triggerTokens'],
      message: `the API compacts at ${MIN_API_COMPACTION_TRIGGER} input tokens or more (use by: 'orchestrator' for less)`,
    });
  }
  if (clearingToolUses(context) && options.protocol === 'legacy-xml') {
    ctx.addIssue({
      code: 'custom',
      path: ['contextManagement', 'mode'],
      message:
        'clearing tool uses needs the native protocol: legacy XML tool calls are plain text the API cannot clear',
    });
  }
}

/**
 * The `context_management` of a model call, and the beta headers it needs; undefined when the API has nothing to
 * do (context management off, or only the orchestrator's own summaries).
 */
export function apiContextManagement(
  options: ContextManagementOptions,
): { config: BetaContextManagementConfig; betas: string[] } | undefined {
  const edits: NonNullable<BetaContextManagementConfig['edits']> = [];
  const betas: string[] = [];
  if (clearingToolUses(options)) {
    const clear = options.clearToolUses;
    const edit: BetaClearToolUses20250919Edit = {
      type: 'clear_tool_uses_20250919',
      trigger:
        clear.triggerToolUses !== undefined
          ? { type: 'tool_uses', value: clear.triggerToolUses }
          : { type: 'input_tokens', value: clear.triggerTokens ?? DEFAULT_CLEAR_TRIGGER_TOKENS },
      keep: { type: 'tool_uses', value: clear.keepToolUses },
      ...(clear.clearAtLeastTokens !== undefined && {
        clear_at_least: { type: 'input_tokens', value: clear.clearAtLeastTokens },
      }),
      ...(clear.excludeTools !== undefined && { exclude_tools: clear.excludeTools }),
      ...(clear.clearToolInputs !== undefined && { clear_tool_inputs: clear.clearToolInputs }),
    };
    edits.push(edit);
    betas.push(CONTEXT_EDITING_BETA);
  }
  if (compacting(options) && options.compaction.by === 'api') {
    const edit: BetaCompact20260112Edit = {
      type: 'compact_20260112',
      trigger: { type: 'input_tokens', value: options.compaction.triggerTokens },
      ...(options.compaction.instructions !== undefined && { instructions: options.compaction.instructions }),
    };
    edits.push(edit);
    betas.push(COMPACTION_BETA);
  }
  return edits.length > 0 ? { config: { edits }, betas } : undefined;
}
