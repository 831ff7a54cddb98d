// The model's prices as this worker knows them (its MODEL_PRICES, then the published table): read by local activities,
// so a run records the prices it priced its calls with, and a new table in a new deploy never changes a replay.
import type { DescribeToolsResult } from '../common/activity-contracts';
import type { ModelPriceTable, ModelPrices } from '../common/pricing';
import { PUBLISHED_PRICES, pricesFor } from '../common/pricing';

export function createModelPricesActivity(workerPrices?: ModelPriceTable) {
  async function modelPrices(model: string): Promise<ModelPrices | null> {
    return pricesFor(model, workerPrices, PUBLISHED_PRICES) ?? null;
  }
  return { modelPrices };
}

/**
 * `describeTools` that also answers the prices of the model it is given: a conversation's start asks both in one
 * local activity (one marker, one round trip through the worker) instead of two (workflows/model-prices.ts).
 */
export function describeToolsWithPrices(
  describeTools: (names: string[]) => Promise<DescribeToolsResult>,
  modelPrices: (model: string) => Promise<ModelPrices | null>,
) {
  return {
    async describeTools(names: string[], model?: string): Promise<DescribeToolsResult> {
      const catalog = await describeTools(names);
      return model === undefined ? catalog : { ...catalog, prices: await modelPrices(model) };
    },
  };
}
