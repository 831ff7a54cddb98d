// A conversation's start asks its tool catalog and its model's prices in one local activity: describeTools answers the
// prices of the model it is given, as the worker knows them (its MODEL_PRICES first, then the published table).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createModelPricesActivity, describeToolsWithPrices } from '../../activities/model-prices-activity';
import { createToolActivities } from '../../activities/tool-activities';
import { demoTools } from '../../testing/demo-tools';
import { PUBLISHED_PRICES } from '../../common/pricing';

const workerPrices = { 'claude-house-1': { input: 1, output: 2, cacheWrite: 1.25, cacheRead: 0.1 } };
const { modelPrices } = createModelPricesActivity(workerPrices);
const { describeTools } = describeToolsWithPrices(createToolActivities(demoTools).describeTools, modelPrices);

test("describeTools answers the model's prices with the catalog: the worker's own, else the published ones", async () => {
  const house = await describeTools(['get_weather', 'no_such_tool'], 'claude-house-1');
  assert.deepEqual(house.unknown, ['no_such_tool']);
  assert.deepEqual(
    house.tools.map((tool) => tool.name),
    ['get_weather'],
  );
  assert.deepEqual(house.prices, workerPrices['claude-house-1']);
  const [published] = Object.keys(PUBLISHED_PRICES);
  assert.deepEqual((await describeTools([], published)).prices, PUBLISHED_PRICES[published!]);
});

test('a model nobody priced has null prices; asked without a model, the catalog has none (as runs before read it)', async () => {
  assert.equal((await describeTools([], 'claude-unpriced-1')).prices, null);
  assert.equal('prices' in (await describeTools(['get_weather'])), false);
});
