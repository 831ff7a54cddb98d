// The gateway's chat page in headless Chromium, as a person uses it: the stock-price chain streams in (the local
// Messages API emits tokens slowly), both tool calls show with input and result, the gateway is restarted while the
// last reply streams and the page carries on without losing or repeating a word, and a tool call is approved — all
// under the page's Content-Security-Policy.
// Screenshots go to test-artifacts/web-ui/chat-page-*.png.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ConversationClient } from '../../client/conversation-client';
import { type Gateway, startGateway } from '../../gateway/gateway-server';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { launchChromium, newPage, saveScreenshot, squash } from '../support/browser';
import { type Harness, namespace, startHarness, uniquePrompt } from '../support/harness';

const TOKEN = 'chat-page-test-token-0123456789';
const uiUrl = process.env.TEMPORAL_UI_URL || 'http://127.0.0.1:8233';
const FINAL =
  'The current stock price of General Motors (GM) is $38.50. ' +
  Array.from({ length: 30 }, (_, i) => `Detail${i + 1}`).join(' ') +
  '.';

let h: Harness;
let gateway: Gateway;
let port: number;
let browser: Browser;
let page: Page;

const start = async (): Promise<Gateway> =>
  startGateway({ conversations: h.conversations, token: TOKEN, namespace, temporalUiUrl: uiUrl, port });

before(async () => {
  h = await startHarness();
  port = 0;
  gateway = await start();
  port = Number(new URL(gateway.url).port);
  browser = await launchChromium();
  ({ page } = await newPage(browser));
});
after(async () => {
  await browser?.close();
  await gateway?.close();
  await h?.close();
});

const assistantText = (call: number) =>
  page.locator(`#log > li.assistant[data-call="${call}"] p`).evaluateAll((ps) => ps.map((p) => p.textContent).join(''));

test('the chat page streams the stock-price chain, survives a gateway restart mid-stream, and takes an approval', async () => {
  const prompt = uniquePrompt(STOCK_QUESTION);
  h.mock.script(prompt, [
    { demo: true, tokenDelayMs: 40 },
    { demo: true, tokenDelayMs: 40 },
    { reply: { content: [{ type: 'text', text: FINAL }], stop_reason: 'end_turn' }, tokenDelayMs: 120 },
    {
      reply: {
        content: [
          { type: 'text', text: 'I will place that order.' },
          { type: 'tool_use', name: 'buy_stock', input: { symbol: 'GM', quantity: 3 } },
        ],
        stop_reason: 'tool_use',
      },
      tokenDelayMs: 20,
    },
    { reply: { content: [{ type: 'text', text: 'Bought 3 GM.' }], stop_reason: 'end_turn' }, tokenDelayMs: 20 },
  ]);

  // The page works under its Content-Security-Policy: Chromium reports anything the policy blocks on the console.
  const blocked: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
  });
  const served = await page.goto(`${gateway.url}/`);
  assert.match(served!.headers()['content-security-policy'] ?? '', /script-src 'self'.*frame-ancestors 'none'/);
  await page.getByLabel('Gateway token').fill(TOKEN);
  await page.getByLabel('Tools for a new conversation').fill([...STOCK_TOOLS, 'buy_stock'].join(', '));
  await page.getByLabel('Message', { exact: true }).fill(prompt);
  await page.getByRole('button', { name: 'Send' }).click();

  // Both tools show as they are called, with their input and, once run, their result.
  const ticker = page.locator('#log > li.tool', { hasText: 'get_ticker_symbol' });
  await ticker.locator('.result', { hasText: 'GM' }).waitFor();
  assert.match(squash(await ticker.locator('pre.input').innerText()), /"company_name": "General Motors"/);
  const price = page.locator('#log > li.tool', { hasText: 'get_current_stock_price' });
  await price.locator('.result', { hasText: '38.50' }).waitFor();
  assert.match(squash(await price.locator('pre.input').innerText()), /"symbol": "GM"/);

  // The last reply streams: part of it is on the page, not all of it. Then the gateway goes away and comes back.
  await page.waitForFunction(() => {
    const text = Array.from(document.querySelectorAll('#log > li.assistant[data-call="3"] p'), (p) => p.textContent);
    return text.join('').includes('Detail2');
  });
  const before = await assistantText(3);
  assert.ok(before.length < FINAL.length, 'the reply was still streaming');
  await saveScreenshot(page, 'chat-page-streaming');
  await gateway.close();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  gateway = await start();
  await page.getByRole('status').filter({ hasText: 'Your turn.' }).waitFor({ timeout: 60_000 });
  assert.equal(await assistantText(3), FINAL, 'every word once, in order, across the restart');
  assert.ok(Number(await page.locator('body').getAttribute('data-reconnects')) >= 1, 'the page reconnected');
  const id = await page.getByLabel(/Conversation id/).inputValue();
  const transcript = await h.conversations.getTranscript(id);
  const last = transcript.at(-1)!.content;
  assert.deepEqual(typeof last === 'string' ? [last] : last.map((b) => (b.type === 'text' ? b.text : '')), [FINAL]);
  const link = page.getByRole('link', { name: 'Open this conversation in the Temporal Web UI' });
  assert.equal(await link.getAttribute('href'), `${uiUrl.replace(/\/$/, '')}/namespaces/${namespace}/workflows/${id}`);
  await saveScreenshot(page, 'chat-page-chain');

  // A tool call that needs approval: the page asks, the person approves, the tool runs.
  await page.getByLabel('Message', { exact: true }).fill('Buy 3 shares of GM.');
  await page.getByRole('button', { name: 'Send' }).click();
  const approval = page.getByRole('group', { name: 'Approve buy_stock?' });
  await approval.waitFor();
  const order = page.locator('#log > li.tool', { hasText: 'buy_stock' });
  assert.match(squash(await order.locator('pre.input').innerText()), /"symbol": "GM", "quantity": 3/);
  await saveScreenshot(page, 'chat-page-approval');
  await approval.getByRole('button', { name: 'Approve' }).click();
  await order.locator('.result', { hasText: 'filled: 3 GM at 38.50' }).waitFor();
  await page.getByRole('status').filter({ hasText: 'Your turn.' }).waitFor();
  assert.equal(await assistantText(5), 'Bought 3 GM.');
  assert.equal(h.executions(id, 'buy_stock').filter((e) => e.event === 'finish').length, 1);
  await saveScreenshot(page, 'chat-page-approved');
  assert.deepEqual(blocked, [], 'nothing the page needs was blocked by its Content-Security-Policy');
});

test("a new conversation's tools default to the task queue's own, so a service's first Send works", async () => {
  // A service whose workers offer one tool: the page must not default to the demo's stock tools.
  const service = await startGateway({
    conversations: new ConversationClient({ client: h.client, taskQueue: h.taskQueue, tools: ['get_weather'] }),
    token: TOKEN,
    namespace,
    port: 0,
  });
  const { context, page: fresh } = await newPage(browser);
  try {
    const prompt = uniquePrompt('Hello there');
    h.mock.script(prompt, [{ reply: { content: [{ type: 'text', text: 'Hi.' }], stop_reason: 'end_turn' } }]);
    await fresh.goto(`${service.url}/`);
    await fresh.getByLabel('Gateway token').fill(TOKEN);
    await fresh.getByLabel('Message', { exact: true }).fill(prompt);
    await fresh.getByRole('button', { name: 'Send' }).click();
    await fresh.getByRole('status').filter({ hasText: 'Your turn.' }).waitFor({ timeout: 60_000 });
    assert.equal(await fresh.getByLabel('Tools for a new conversation').inputValue(), 'get_weather');
    const [request] = h.mock.requestsFor(prompt);
    assert.deepEqual(
      request?.body.tools?.map((tool: { name: string }) => tool.name),
      ['get_weather'],
      "the model was offered the task queue's one tool",
    );
  } finally {
    await context.close();
    await service.close();
  }
});
