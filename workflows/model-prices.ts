// The prices a run prices its model calls with: the conversation's own (`prices` option), else the worker's, read once
// per run by a local activity whose result the history keeps: the describeTools call that starts every run, since one
// local activity costs a start less than two. Deterministic on replay.
import { proxyLocalActivities } from '@temporalio/workflow';
import type { DescribeToolsResult } from '../common/activity-contracts';
import type { ConversationOptions } from '../common/options';
import type { ConversationState } from './conversation-state';
import type { ModelPrices } from '../common/pricing';

const { modelPrices } = proxyLocalActivities<{ modelPrices(model: string): Promise<ModelPrices | null> }>({
  startToCloseTimeout: '10 seconds',
});

/** `catalog`: the run's describeTools result, which carries the worker's prices since they are asked with it. */
export async function resolveModelPrices(
  options: ConversationOptions,
  catalog: DescribeToolsResult,
): Promise<ModelPrices | null> {
  if (options.prices) return options.prices;
  if (catalog.prices !== undefined) return catalog.prices;
  // A run from before asked describeTools without the model: its history has the prices' own local activity next.
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
  if (model === state.options.model || state.hasFallbackPrices(model)) return;
  state.setFallbackPrices(model, await modelPrices(model));
}
