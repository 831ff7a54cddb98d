// The chat page with sub-agents (issue #33), in headless Chromium: an agent tool's card shows the sub-agent's start,
// its steps (its tool call with input and result, its answer) nested under the call, and its end; the parent's reply
// follows. Opening the conversation again shows each step once.
// Screenshots go to test-artifacts/web-ui/chat-page-sub-agent*.png.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { defineAgentTool } from '../../activities/agent-tool-definition';
import { type Gateway, startGateway } from '../../gateway/gateway-server';
import { demoTools } from '../../testing/demo-tools';
import { launchChromium, newPage, saveScreenshot } from '../support/browser';
import { type Harness, namespace, startHarness, uniquePrompt } from '../support/harness';
import { callsTools } from '../support/script-steps';

const TOKEN = 'chat-page-sub-agents-token-0123456789';
const researcher = defineAgentTool({
  name: 'research_company',
  description: 'Researches one company: its ticker symbol and current stock price.',
  agent: { tools: ['get_ticker_symbol', 'get_current_stock_price'] },
});

const trader = defineAgentTool({
  name: 'place_order',
  description: 'Places one order.',
  agent: { tools: ['buy_stock'] },
});

let h: Harness;
let gateway: Gateway;
let browser: Browser;
let page: Page;
before(async () => {
  h = await startHarness({ tools: [...demoTools, researcher, trader] });
  gateway = await startGateway({ conversations: h.conversations, token: TOKEN, namespace });
  browser = await launchChromium();
  ({ page } = await newPage(browser));
});
after(async () => {
  await browser?.close();
  await gateway?.close();
  await h?.close();
});

test("the agent tool's card shows the sub-agent's steps nested under it, its end, then the parent's reply", async () => {
  const prompt = uniquePrompt('Research General Motors for me');
  const task = uniquePrompt('Research General Motors');
  h.mock.script(prompt, [
    callsTools(['research_company', { task }]),
    { reply: { content: [{ type: 'text', text: 'General Motors looks fine.' }], stop_reason: 'end_turn' } },
  ]);
  h.mock.script(task, [
    {
      reply: {
        content: [{ type: 'tool_use', name: 'get_ticker_symbol', input: { company_name: 'General Motors' } }],
        stop_reason: 'tool_use',
      },
      tokenDelayMs: 20,
    },
    {
      reply: { content: [{ type: 'text', text: 'General Motors is GM.' }], stop_reason: 'end_turn' },
      tokenDelayMs: 20,
    },
  ]);
  await page.goto(`${gateway.url}/`);
  await page.getByLabel('Gateway token').fill(TOKEN);
  await page.getByLabel('Tools for a new conversation').fill('research_company');
  await page.getByLabel('Message', { exact: true }).fill(prompt);
  await page.getByRole('button', { name: 'Send' }).click();

  const card = page.locator('#log > li.tool', { hasText: 'Tool call: research_company' });
  const agent = card.locator('section.agent');
  await agent.locator('h4', { hasText: /: (completed|awaiting_user|ended)/ }).waitFor({ timeout: 60_000 });
  const id = await page.getByLabel(/Conversation id/).inputValue();
  assert.match((await agent.getAttribute('data-agent'))!, new RegExp(`^${id}/agent-`));
  assert.equal(await agent.locator('.task').innerText(), task);
  const call = agent.locator('ol.steps > li.call');
  assert.equal(await call.count(), 1);
  assert.match(await call.innerText(), /→ get_ticker_symbol\({"company_name":"General Motors"}\)\n?← GM/);
  assert.equal(await agent.locator('ol.steps > li.answer').innerText(), 'Answer: General Motors is GM.');
  // The child's answer is in its section, not written as the parent's reply; the parent's reply follows.
  await page.getByRole('status').filter({ hasText: 'Your turn.' }).waitFor();
  const replies = await page.locator('#log > li.assistant p').allInnerTexts();
  assert.deepEqual(replies, ['General Motors looks fine.']);
  await saveScreenshot(page, 'chat-page-sub-agent');

  // Opened again (a reload): the sub-agent's steps once each.
  await page.getByRole('button', { name: 'Open' }).click();
  await agent.locator('ol.steps > li.answer').waitFor();
  await page.getByRole('status').filter({ hasText: 'Your turn.' }).waitFor();
  assert.equal(await page.locator('#log section.agent').count(), 1);
  assert.equal(await call.count(), 1);
  assert.equal(await agent.locator('ol.steps > li.answer').count(), 1);
});

test("a sub-agent's tool call that needs approval is asked on the page, and the decision reaches the sub-agent", async () => {
  const prompt = uniquePrompt('Buy 2 GM for me');
  const task = uniquePrompt('Buy 2 shares of GM');
  h.mock.script(prompt, [
    callsTools(['place_order', { task }]),
    { reply: { content: [{ type: 'text', text: 'Your order is in.' }], stop_reason: 'end_turn' } },
  ]);
  h.mock.script(task, [
    callsTools(['buy_stock', { symbol: 'GM', quantity: 2 }]),
    { reply: { content: [{ type: 'text', text: 'Bought 2 GM.' }], stop_reason: 'end_turn' } },
  ]);
  await page.goto(`${gateway.url}/`);
  await page.getByLabel('Gateway token').fill(TOKEN);
  await page.getByLabel('Conversation id').fill('');
  await page.getByLabel('Tools for a new conversation').fill('place_order');
  await page.getByLabel('Message', { exact: true }).fill(prompt);
  await page.getByRole('button', { name: 'Send' }).click();

  const approval = page.getByRole('group', { name: 'Approve buy_stock?' });
  await approval.waitFor({ timeout: 60_000 });
  assert.match(await approval.innerText(), /asked by sub-agent .+\/agent-/);
  await approval.getByRole('button', { name: 'Approve' }).click();
  const agent = page.locator('#log > li.tool', { hasText: 'Tool call: place_order' }).locator('section.agent');
  await agent.locator('ol.steps > li.answer', { hasText: 'Answer: Bought 2 GM.' }).waitFor({ timeout: 60_000 });
  assert.match(await agent.locator('ol.steps > li.call').innerText(), /buy_stock[\s\S]*filled: 2 GM/);
  await page.getByRole('status').filter({ hasText: 'Your turn.' }).waitFor();
  await saveScreenshot(page, 'chat-page-sub-agent-approval');
});
