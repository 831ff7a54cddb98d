// The prices a run prices its model calls with: the conversation's own (`prices` option), else the worker's, read once
// per run by a local activity whose result the history keeps. Deterministic on replay.
import { proxyLocalActivities } from '@temporalio/workflow';
import type { ConversationOptions } from '../common/options';
import type { ModelPrices } from '../common/pricing';

const { modelPrices } = proxyLocalActivities<{ modelPrices(model: string): Promise<ModelPrices | null> }>({
  startToCloseTimeout: '10 seconds',
});

export async function resolveModelPrices(options: ConversationOptions): Promise<ModelPrices | null> {
  if (options.prices) return options.prices;
  // No patched() guard: on replay a local activity's result can resolve in an earlier activation than the one
  // that recorded a patch marker after it, so patched() would answer false there (a nondeterminism error seen in
  // test/e2e/structured-output.test.ts). Nothing older than this call has been released.
  return modelPrices(options.model);
}
