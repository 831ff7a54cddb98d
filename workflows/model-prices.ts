// The prices a run prices its model calls with: the conversation's own (`prices` option), else the worker's, read once
// per run by a local activity whose result the history keeps. Deterministic on replay.
import { proxyLocalActivities } from '@temporalio/workflow';
import type { ConversationOptions } from '../common/options';
import type { ConversationState } from './conversation-state';
import type { ModelPrices } from '../common/pricing';

const { modelPrices } = proxyLocalActivities<{ modelPrices(model: string): Promise<ModelPrices | null> }>({
  startToCloseTimeout: '10 seconds',
});

export async function resolveModelPrices(options: ConversationOptions): Promise<ModelPrices | null> {
  if (options.prices) return options.prices;
  // No patched() guard: a run whose first local activity and this patch marker landed in different workflow tasks
  // failed to replay ("patch marker encountered … no corresponding change command", test/e2e/structured-output).
  // Nothing older than this call has been released, so the replay fixture was recorded again instead.
  return modelPrices(options.model);
}

/**
 * A fallback model's prices (the worker's, else the published ones; the `prices` option is the conversation's model's
 * only), read by the same local activity the first time a call of this run goes to it.
 */
export async function resolveFallbackPrices(state: ConversationState, model: string): Promise<void> {
  if (model === state.options.model || state.fallbackPrices.has(model)) return;
  state.fallbackPrices.set(model, await modelPrices(model));
}
