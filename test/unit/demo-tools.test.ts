// The demo tools look names up that come from the model: a name that happens to be a property of every JavaScript
// object ("__proto__", "constructor") is an unknown name like any other, not a hit.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ToolContext, ToolError } from '../../activities/tool-definition';
import { buyStock } from '../../testing/demo-tools/buy-stock';
import { getCurrentStockPrice } from '../../testing/demo-tools/get-current-stock-price';
import { getTickerSymbol } from '../../testing/demo-tools/get-ticker-symbol';
import { getWeather } from '../../testing/demo-tools/get-weather';

const context: ToolContext = {
  idempotencyKey: 'wf/run/call',
  attempt: 1,
  signal: new AbortController().signal,
  heartbeat: () => undefined,
};
const OBJECT_PROPERTY_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];

async function raised(run: () => unknown): Promise<ToolError> {
  try {
    await run();
  } catch (error) {
    assert.ok(error instanceof ToolError, `expected a ToolError, got ${String(error)}`);
    return error;
  }
  assert.fail('the tool returned a result');
}

describe('demo tools given names that are properties of every object', () => {
  for (const name of OBJECT_PROPERTY_NAMES) {
    test(`get_ticker_symbol("${name}") is TickerNotFound`, async () => {
      const error = await raised(() => getTickerSymbol.run({ company_name: name }, context));
      assert.equal(error.name, 'TickerNotFound');
    });
    test(`get_current_stock_price("${name}") and buy_stock("${name}") are ValueError`, async () => {
      assert.equal((await raised(() => getCurrentStockPrice.run({ symbol: name }, context))).name, 'ValueError');
      assert.equal((await raised(() => buyStock.run({ symbol: name, quantity: 1 }, context))).name, 'ValueError');
    });
    test(`get_weather("${name}") is ValueError`, async () => {
      assert.equal((await raised(() => getWeather.run({ location: name }, context))).name, 'ValueError');
    });
  }

  test('the known names still answer', async () => {
    assert.equal(await getTickerSymbol.run({ company_name: 'General Motors, Inc.' }, context), 'GM');
    assert.equal(await getCurrentStockPrice.run({ symbol: 'gm' }, context), '38.50');
    assert.deepEqual(await getWeather.run({ location: 'Paris, France' }, context), {
      temperature: 14,
      unit: 'celsius',
      conditions: 'partly cloudy',
    });
  });
});
