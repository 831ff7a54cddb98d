// The prices a run prices its model calls with: the conversation's own (`prices` option), else the worker's, read once
// per run by a local activity whose result the history keeps. Deterministic on replay.
import { patched, proxyLocalActivities } from '@temporalio/workflow';
import type { ConversationOptions } from '../common/options';
import type { ModelPrices } from '../common/pricing';

const { modelPrices } = proxyLocalActivities<{ modelPrices(model: string): Promise<ModelPrices | null> }>({
  startToCloseTimeout: '10 seconds',
});

export async function resolveModelPrices(options: ConversationOptions): Promise<ModelPrices | null> {
  if (options.prices) return options.prices;
  // A history recorded before costs were kept has no such activity: its calls stay unpriced (cost unknown).
  if (!patched('model-prices')) return null;
  return modelPrices(options.model);
}
