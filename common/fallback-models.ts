// Fallback models: the conversation's own list of models to try, in order, when a model call stays overloaded (529
// `overloaded_error`, or the same error in the middle of a stream). The switch is the workflow's: the model activity
// of a call that may fall back stops retrying an overloaded model after `fallbackAfterAttempts` attempts (a failure of
// type ModelOverloaded that is not retried), and the workflow schedules the same call on the next model, as an
// activity of its own. Only overload switches: a 429 is the account's limit (the API says when to come back, and
// Temporal waits that long), a 5xx is not tied to one model's capacity. Pure: the workflow and the tests use it.
import { z } from 'zod';
import { addCost } from './pricing';
import { addUsage, type TokenUsage, ZERO_USAGE } from './usage';
import { sharedOnce } from './shared-once';

/** Attempts of one call on one model before it moves to the next, when the option does not say. */
export const DEFAULT_FALLBACK_AFTER_ATTEMPTS = 3;
/** At most this many fallback models: every one of them may take `fallbackAfterAttempts` attempts. */
export const MAX_FALLBACK_MODELS = 4;

export const fallbackModelsSchema = sharedOnce('fallbackModels.fallbackModelsSchema', () =>
  z
    .array(z.string().trim().min(1).max(256))
    .min(1)
    .max(MAX_FALLBACK_MODELS)
    .refine((models) => new Set(models).size === models.length, 'fallbackModels lists a model twice'),
);

/** The activity's attempts on one model (MODEL_RETRY allows 12 in all). */
export const fallbackAfterAttemptsSchema = sharedOnce('fallbackModels.fallbackAfterAttemptsSchema', () =>
  z.number().int().min(1).max(12),
);

/** The models a call may go to, in order: the conversation's model first. */
export function modelChain(options: { model: string; fallbackModels?: string[] | undefined }): string[] {
  return [options.model, ...(options.fallbackModels ?? [])];
}

/** How many attempts a call on one model gets when it is overloaded; undefined: no fallback, Temporal's retries. */
export function overloadedAttempts(options: {
  fallbackModels?: string[] | undefined;
  fallbackAfterAttempts?: number | undefined;
}): number | undefined {
  if (!options.fallbackModels?.length) return undefined;
  return options.fallbackAfterAttempts ?? DEFAULT_FALLBACK_AFTER_ATTEMPTS;
}

/** The Web UI summary's note on a call that went to a fallback model. */
export function fallbackNote(chain: string[], index: number): string {
  return index === 0 ? '' : ` · fallback ${index} (${chain.slice(0, index).join(', ')} overloaded)`;
}

/** Why a turn failed when every model of the chain stayed overloaded. */
export function allOverloadedMessage(chain: string[], attempts: number): string {
  const each = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
  return (
    `Every model stayed overloaded (${each} each): ${chain.join(', ')}. ` +
    'Nothing of the turn was answered; send the message again later.'
  );
}

/** One model's share of what a turn or a conversation spent. */
export interface ModelUsage {
  /** Model calls it answered (rungs of the max_tokens ladder included). */
  calls: number;
  usage: TokenUsage;
  /** USD (null: that model has no price). */
  costUsd: number | null;
}

/** Usage and cost per model, by model name. */
export type UsageByModel = Record<string, ModelUsage>;

/** `byModel` with `usage` (costing `cost`) added to `model`; `answered`: it was a model call's reply. */
export function addModelUsage(
  byModel: UsageByModel | undefined,
  model: string,
  usage: TokenUsage,
  cost: number | null,
  answered: boolean,
): UsageByModel {
  const before = byModel?.[model] ?? { calls: 0, usage: ZERO_USAGE, costUsd: 0 };
  return {
    ...byModel,
    [model]: {
      calls: before.calls + (answered ? 1 : 0),
      usage: addUsage(before.usage, usage),
      costUsd: addCost(before.costUsd, cost),
    },
  };
}

/** `a` and `b` together, model by model (a sub-agent's spending joining its parent's). */
export function mergeUsageByModel(a: UsageByModel | undefined, b: UsageByModel): UsageByModel {
  const merged: UsageByModel = { ...a };
  for (const [model, part] of Object.entries(b)) {
    const before = merged[model];
    merged[model] = before
      ? {
          calls: before.calls + part.calls,
          usage: addUsage(before.usage, part.usage),
          costUsd: addCost(before.costUsd, part.costUsd),
        }
      : part;
  }
  return merged;
}
