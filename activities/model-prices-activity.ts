// The model's prices as this worker knows them (its MODEL_PRICES, then the published table): a local activity, so a
// run records the prices it priced its calls with, and a new table in a new deploy never changes a replay.
import type { ModelPriceTable, ModelPrices } from '../common/pricing';
import { PUBLISHED_PRICES, pricesFor } from '../common/pricing';

export function createModelPricesActivity(workerPrices?: ModelPriceTable) {
  async function modelPrices(model: string): Promise<ModelPrices | null> {
    return pricesFor(model, workerPrices, PUBLISHED_PRICES) ?? null;
  }
  return { modelPrices };
}
