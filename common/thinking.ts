// Thinking and effort: the conversation's options `thinking` (the request's `thinking`) and `effort` (the request's
// `output_config.effort`), checked as the Messages API checks them, so that a conversation that would be refused on
// its first call is refused at start instead (invalid_options). Pure and workflow-safe: the client, the workflow and
// the activities share it.
//
// What omitting `thinking` does depends on the model (MODEL_THINKING): a model that thinks by default (Claude Sonnet
// 5.5, Opus 5.5) returns thinking blocks with no option at all, and the orchestrator sends them back like any other.
import type { ThinkingConfigParam } from '@anthropic-ai/sdk/resources/messages';
import { z } from 'zod';
import { sharedOnce } from './shared-once';

/** The API's floor for `thinking.budget_tokens` (`enabled`). */
export const MIN_THINKING_BUDGET_TOKENS = 1024;

const display = sharedOnce('thinking.display', () => z.enum(['summarized', 'omitted']).optional());

/**
 * `adaptive`: the model decides when and how much to think (effort steers it); `enabled`: manual extended thinking
 * with a `budget_tokens` (≥ 1,024 and below `max_tokens`); `disabled`; `between_tools`: no up-front thinking, only the
 * short notes between tool calls (Claude Sonnet 5.5's lowest setting, which it takes instead of `disabled`).
 * `display`: `summarized` returns the thinking text, `omitted` only its signature.
 */
export const thinkingOptionSchema = sharedOnce('thinking.thinkingOptionSchema', () =>
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('adaptive'), display }),
    z.strictObject({
      type: z.literal('enabled'),
      budget_tokens: z
        .number()
        .int()
        .min(MIN_THINKING_BUDGET_TOKENS, 'budget_tokens must be at least 1,024 (the API refuses fewer)')
        .max(128_000),
      display,
    }),
    z.strictObject({ type: z.literal('disabled') }),
    z.strictObject({ type: z.literal('between_tools') }),
  ]),
);
export type ThinkingOption = z.infer<typeof thinkingOptionSchema>;

export const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;
/** `output_config.effort`: how much effort the model puts into its reply (thinking depth included). */
export const effortSchema = sharedOnce('thinking.effortSchema', () => z.enum(EFFORTS));
export type Effort = z.infer<typeof effortSchema>;

type ThinkingType = ThinkingOption['type'];

interface ModelThinking {
  /** What the model does when the request has no `thinking`. */
  byDefault: 'adaptive' | 'off';
  /** `thinking.type` values the API answers 400 for this model. */
  rejects: readonly ThinkingType[];
}

/**
 * The thinking behaviour of the models the orchestrator knows (platform.claude.com, "Troubleshooting thinking" and
 * the models' "What's new" pages, read on 2026-11-24): extended thinking (`enabled`) is the only mode of the 4.5
 * models, deprecated on 4.6 and refused from 4.7 on; only Sonnet 5.5 takes `between_tools`, and it refuses
 * `disabled`; Opus 5.5 cannot turn thinking off. A model not listed is not checked: the API decides.
 */
const MODEL_THINKING: Record<string, ModelThinking> = {
  'claude-sonnet-5-5': { byDefault: 'adaptive', rejects: ['enabled', 'disabled'] },
  'claude-opus-5-5': { byDefault: 'adaptive', rejects: ['enabled', 'disabled', 'between_tools'] },
  'claude-opus-4-6': { byDefault: 'off', rejects: ['between_tools'] },
  'claude-sonnet-4-6': { byDefault: 'off', rejects: ['between_tools'] },
  'claude-opus-4-5': { byDefault: 'off', rejects: ['adaptive', 'between_tools'] },
  'claude-sonnet-4-5': { byDefault: 'off', rejects: ['adaptive', 'between_tools'] },
  'claude-haiku-4-5': { byDefault: 'off', rejects: ['adaptive', 'between_tools'] },
};

/** A dated id (`claude-sonnet-4-5-20250929`) behaves like its alias. */
function modelThinking(model: string): ModelThinking | undefined {
  return MODEL_THINKING[model] ?? MODEL_THINKING[model.replace(/-\d{8}$/, '')];
}

/** Whether the model thinks when the request says nothing about thinking (false also for a model not listed). */
export function thinksByDefault(model: string): boolean {
  return modelThinking(model)?.byDefault === 'adaptive';
}

/**
 * Whether the request turns thinking on by its `thinking` field: `adaptive` and `enabled`. (A model that thinks by
 * default thinks without one; `between_tools` writes notes between tool calls but no up-front thinking.)
 */
export function asksForThinking(thinking: ThinkingOption | undefined): boolean {
  return thinking?.type === 'adaptive' || thinking?.type === 'enabled';
}

/** What the API answers a forced tool_choice with thinking on, and what the option check says instead. */
export const FORCED_TOOL_CHOICE_WITH_THINKING = 'Thinking may not be enabled when tool_choice forces tool use.';

export interface ThinkingProblem {
  path: (string | number)[];
  message: string;
}

/**
 * What the API would refuse in a conversation's thinking options, every rung of the max_tokens ladder included: the
 * rungs only climb from the first (`min(maxTokens, cap)`), so a budget below the first is below every one.
 * `forcedToolChoice`: the conversation forces a tool on some call (toolChoice `any`/`tool`, or a typed answer in mode
 * `tool`), which the API refuses with thinking on.
 */
export function thinkingProblems(options: {
  model: string;
  maxTokens: number;
  /** The top of the ladder: maxTokensCap, else the model's output cap. */
  cap: number;
  thinking?: ThinkingOption | undefined;
  effort?: Effort | undefined;
  forcedToolChoice?: 'toolChoice' | 'output' | undefined;
}): ThinkingProblem[] {
  const problems: ThinkingProblem[] = [];
  const { thinking, effort, model } = options;
  if (thinking?.type === 'enabled') {
    const firstRung = Math.min(options.maxTokens, options.cap);
    if (thinking.budget_tokens >= firstRung) {
      problems.push({
        path: ['thinking', 'budget_tokens'],
        message:
          `budget_tokens (${thinking.budget_tokens}) must be below max_tokens on every call, the first included ` +
          `(maxTokens ${options.maxTokens}${firstRung < options.maxTokens ? `, capped at ${firstRung}` : ''}): ` +
          'raise maxTokens or lower budget_tokens',
      });
    }
  }
  const known = modelThinking(model);
  if (thinking && known?.rejects.includes(thinking.type)) {
    const instead =
      thinking.type === 'disabled' && !known.rejects.includes('between_tools')
        ? '; its lowest setting is "between_tools"'
        : thinking.type === 'disabled'
          ? '; lower effort instead'
          : '';
    problems.push({
      path: ['thinking', 'type'],
      message: `${model} does not accept thinking "${thinking.type}" (the API answers 400)${instead}`,
    });
  }
  if (thinking?.type === 'between_tools' && (effort === 'xhigh' || effort === 'max')) {
    problems.push({
      path: ['effort'],
      message: `thinking "between_tools" runs at effort low, medium or high; for "${effort}" use thinking "adaptive"`,
    });
  }
  const forced = forcedToolChoiceProblem(thinking, options.forcedToolChoice);
  if (forced) problems.push({ path: [options.forcedToolChoice!], message: forced });
  return problems;
}

/**
 * Why a conversation that forces a tool (`toolChoice` any/tool, or a typed answer in mode `tool`: `output`) cannot
 * have this thinking: the API refuses a forced tool_choice with thinking on. Undefined when it can.
 */
export function forcedToolChoiceProblem(
  thinking: ThinkingOption | undefined,
  forced: 'toolChoice' | 'output' | undefined,
): string | undefined {
  if (!forced || !asksForThinking(thinking)) return undefined;
  return forced === 'toolChoice'
    ? `${FORCED_TOOL_CHOICE_WITH_THINKING} With thinking "${thinking!.type}", use toolChoice "auto" or "none"`
    : 'a typed answer in mode "tool" forces the answer tool, which the API refuses with thinking on ' +
        `("${FORCED_TOOL_CHOICE_WITH_THINKING}"): use mode "native" (output_config.format) with thinking`;
}

/** The request's `thinking` field, as the API takes it. */
export function thinkingParam(thinking: ThinkingOption): ThinkingConfigParam {
  return thinking as ThinkingConfigParam;
}
