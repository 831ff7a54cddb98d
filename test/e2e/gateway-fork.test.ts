// Forks through the gateway: POST /api/conversations/:id/fork under the owner rules of every route (another principal
// gets the 404 of a conversation that does not exist; the fork belongs to its caller), its body checked; and the chat
// page's "fork from here" on a user message, which forks before that turn and opens the fork in place.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ConversationOwner, ForkedFrom } from '../../common/search-attributes';
import type { GatewayToken } from '../../gateway/gateway-config';
import { type Gateway, startGateway } from '../../gateway/gateway-server';
import { launchChromium, newPage, saveScreenshot } from '../support/browser';
import { type Harness, namespace, startHarness, uniquePrompt } from '../support/harness';
import { callsTools, says } from '../support/script-steps';

const ALICE = `alice-token-${randomUUID()}`;
const BOB = `bob-token-${randomUUID()}`;
const TOKENS: GatewayToken[] = [
  { token: ALICE, principal: 'alice', admin: false },
  { token: BOB, principal: 'bob', admin: false },
];

let h: Harness;
let gateway: Gateway;
before(async () => {
  h = await startHarness();
  gateway = await startGateway({ conversations: h.conversations, tokens: TOKENS, namespace });
});
after(async () => {
  await gateway?.close();
  await h?.close();
});

async function as(token: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers, read field by field
  return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as any };
}

/** Alice's conversation of two turns, the first with a tool call; `more` scripts what forks answer. */
async function alicesConversation(...more: string[]) {
  const prompt = uniquePrompt('Look up General Motors.');
  h.mock.script(prompt, [
    callsTools(['get_ticker_symbol', { company_name: 'General Motors' }]),
    says('General Motors trades as GM.'),
    says('GM is at 38.50.'),
    ...more.map((text) => says(text)),
  ]);
  const id = `gateway-fork-${randomUUID().slice(0, 8)}`;
  await h.conversations.sendMessage(id, prompt, { start: { tools: ['get_ticker_symbol'], owner: 'alice' } });
  await h.conversations.sendMessage(id, 'And its price?');
  return { id, prompt };
}

describe('POST /api/conversations/:id/fork', () => {
  test("the owner forks: 201 with the fork's id and turn, owned by the caller, listed under ForkedFrom", async () => {
    const { id } = await alicesConversation('Forked answer.');
    const forked = await as(ALICE, 'POST', `/api/conversations/${id}/fork`, {
      at: { beforeTurn: 2 },
      message: 'What about Ford?',
      options: { system: 'Be brief.' },
    });
    assert.equal(forked.status, 201, JSON.stringify(forked.body));
    assert.equal(forked.body.turn, 2);
    assert.equal(forked.body.offset, 0);
    assert.equal(forked.body.forkedFrom.workflowId, id);
    const fork: string = forked.body.id;
    assert.equal((await h.conversations.awaitTurn(fork, 2)).text, 'Forked answer.');
    const described = await h.conversations.handle(fork).describe();
    assert.equal(described.typedSearchAttributes.get(ConversationOwner), 'alice');
    assert.equal(described.typedSearchAttributes.get(ForkedFrom), id);
    const state = await as(ALICE, 'GET', `/api/conversations/${fork}`);
    assert.deepEqual(state.body.forkedFrom, forked.body.forkedFrom);
  });

  test('another principal gets the 404 of a conversation that does not exist; bad bodies are 400; a point past the end 409', async () => {
    const { id } = await alicesConversation();
    const bobs = await as(BOB, 'POST', `/api/conversations/${id}/fork`, { at: { beforeTurn: 2 } });
    assert.equal(bobs.status, 404);
    assert.deepEqual(bobs.body, { error: { code: 'not_found', message: `No open conversation "${id}".` } });
    for (const body of [
      {},
      { at: { beforeTurn: -1 } },
      { at: { beforeTurn: 1.5 } },
      { at: { beforeTurn: 2 }, owner: 'bob' },
      { at: { beforeTurn: 2 }, id: 'has space' },
      { at: { beforeTurn: 2 }, message: '' },
      { at: { beforeTurn: 2 }, options: 'opus' },
    ]) {
      const refused = await as(ALICE, 'POST', `/api/conversations/${id}/fork`, body);
      assert.equal(refused.status, 400, JSON.stringify(body));
    }
    const unknownTool = await as(ALICE, 'POST', `/api/conversations/${id}/fork`, {
      at: { beforeTurn: 2 },
      options: { tools: ['get_horoscope'] },
    });
    assert.equal(unknownTool.status, 400);
    assert.equal(unknownTool.body.error.code, 'invalid_options');
    const past = await as(ALICE, 'POST', `/api/conversations/${id}/fork`, { at: { beforeTurn: 9 } });
    assert.equal(past.status, 409);
    assert.match(past.body.error.message, /the latest point is before turn 3/);
    assert.equal((await as(ALICE, 'GET', `/api/conversations/${id}/fork`)).status, 405);
  });

  test('a step point: 201 with the turn the fork goes on with and offset 0; its answer; a step with a message is 400', async () => {
    const { id } = await alicesConversation('Another answer to turn 1.');
    const forked = await as(ALICE, 'POST', `/api/conversations/${id}/fork`, {
      at: { afterStep: { turn: 1, step: 1 } },
    });
    assert.equal(forked.status, 201, JSON.stringify(forked.body));
    assert.equal(forked.body.turn, 1);
    assert.equal(forked.body.offset, 0);
    assert.deepEqual(forked.body.forkedFrom, { ...forked.body.forkedFrom, workflowId: id, turn: 1, step: 1 });
    const answer = await h.conversations.awaitTurn(forked.body.id, 1);
    assert.equal(answer.text, 'Another answer to turn 1.');
    assert.equal(h.executions(forked.body.id).length, 0, 'no tool ran again');
    for (const body of [
      { at: { afterStep: { turn: 1, step: 1 } }, message: 'Hello' },
      { at: { afterStep: { turn: 1, step: 0 } } },
      { at: { afterStep: { turn: 1 } } },
    ]) {
      const refused = await as(ALICE, 'POST', `/api/conversations/${id}/fork`, body);
      assert.equal(refused.status, 400, JSON.stringify(body));
    }
    const answerStep = await as(ALICE, 'POST', `/api/conversations/${id}/fork`, {
      at: { afterStep: { turn: 1, step: 2 } },
    });
    assert.equal(answerStep.status, 409);
    assert.match(answerStep.body.error.message, /step 2 is its answer: fork after turn 1/);
  });
});

describe('the chat page', () => {
  let browser: Browser;
  let page: Page;
  before(async () => {
    browser = await launchChromium();
    ({ page } = await newPage(browser));
  });
  after(async () => {
    await browser?.close();
  });

  test('"fork from here" on the second user message forks before turn 2 and opens the fork', async () => {
    const { id } = await alicesConversation('The fork, from the page.');
    await page.goto(`${gateway.url}/`);
    await page.getByLabel('Gateway token').fill(ALICE);
    await page.getByLabel(/Conversation id/).fill(id);
    await page.getByRole('button', { name: 'Open', exact: true }).click();
    const second = page.locator('#log > li.user[data-turn="2"]');
    await second.waitFor();
    await second.getByRole('button', { name: 'fork from here' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /a fork of .* before turn 2/ })
      .waitFor();
    const forkId = await page.getByLabel(/Conversation id/).inputValue();
    assert.notEqual(forkId, id);
    assert.equal((await h.conversations.getState(forkId)).forkedFrom?.workflowId, id);
    // What came before turn 2 stays shown, turn 2 itself does not, and a note names the origin.
    assert.equal(await page.locator('#log > li.user[data-turn="2"]').count(), 0);
    assert.match(await page.locator('#log > li.note').innerText(), new RegExp(`Forked from ${id} before turn 2`));
    await page.getByLabel('Message', { exact: true }).fill('Something else?');
    await page.getByRole('button', { name: 'Send' }).click();
    await page
      .locator('#log > li.assistant', { hasText: 'The fork, from the page.' })
      .waitFor()
      .catch(async (err: unknown) => {
        console.log('# status:', await page.locator('#status').innerText());
        console.log('# state:', JSON.stringify(await h.conversations.getState(forkId)));
        console.log('# log:', await page.locator('#log').innerHTML());
        throw err;
      });
    await saveScreenshot(page, 'chat-page-fork');
    const transcript = await h.conversations.getTranscript(forkId);
    assert.deepEqual(transcript[4], { role: 'user', content: 'Something else?' });
  });
});
