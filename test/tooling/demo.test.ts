// `npm start`, the first command of CONTRIBUTING.md, as a person runs it (against the test run's dev server, without an API
// key): the reference conversation printed step by step, the answer with what it took, and its Web UI link.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runScript } from '../support/run-script';

for (const protocol of ['native', 'legacy-xml'] as const) {
  test(`npm start${protocol === 'native' ? '' : ' -- --protocol legacy-xml'} runs the ticker → price chain and links to the Web UI`, async () => {
    const output = await runScript(
      'scripts/demo.ts',
      '--exit',
      ...(protocol === 'native' ? [] : ['--protocol', protocol]),
    );
    const lines = output.split('\n');
    const at = (prefix: string) => lines.findIndex((line) => line.startsWith(prefix));
    assert.ok(at('Model: the local Messages API server') >= 0, output);
    assert.ok(at(`Conversation demo-stock-price-`) >= 0 && output.includes(`(${protocol} tool use)`), output);
    assert.ok(at('user       What is the current stock price of General Motors?') > 0, output);
    if (protocol === 'native') {
      const ticker = at('  → tool   get_ticker_symbol(company_name="General Motors")');
      assert.ok(ticker > 0, output);
      assert.ok(at('  ← result GM') > ticker, output);
      const price = at('  → tool   get_current_stock_price(symbol="GM")');
      assert.ok(price > at('  ← result GM'), output);
      assert.ok(at('  ← result 38.50') > price, output);
    } else {
      // The legacy protocol's turns are text: the transcript shows the model's <function_calls> and the results.
      const ticker = output.indexOf('<company_name>General Motors</company_name>');
      const gm = output.indexOf('<stdout>\nGM\n</stdout>');
      const price = output.indexOf('<symbol>GM</symbol>');
      const quote = output.indexOf('<stdout>\n38.50\n</stdout>');
      assert.ok(ticker > 0 && gm > ticker && price > gm && quote > price, output);
    }
    assert.match(output, /\nAnswer: .*\$38\.50/);
    assert.match(output, /\(3 model calls, 2 tool calls, \d+ input \/ \d+ output tokens, \$\d+\.\d{4}\)/);
    const id = /Conversation (demo-stock-price-[0-9a-f]+)/.exec(output)![1];
    assert.ok(output.includes(`Web UI: ${process.env.TEMPORAL_UI_URL}/namespaces/`), output);
    assert.ok(output.includes(`/workflows/${id}`), output);
  });
}
