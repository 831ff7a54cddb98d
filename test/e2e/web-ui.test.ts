// The dev server's real Web UI (TEMPORAL_UI_URL), in headless Chromium: what a person sees of a conversation.
// One ticker → price conversation (completed) and one left open (awaiting_user), then:
//   - the history page: the three model calls and the two tool executions, each with its summary, input and result
//     (Compact view, every activity expanded; the JSON shown by the UI's code viewer is parsed);
//   - the User Metadata tab: the first user message as the static summary;
//   - the workflows list: a ConversationStatus query separates the completed conversation from the open one.
// Screenshots go to test-artifacts/web-ui/ (also one per failing test: failure-<test>.png).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { DEFAULT_MODEL } from '../../common/options';
import { launchChromium, newPage, saveScreenshot, squash } from '../support/browser';
import { STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { type Harness, namespace, startHarness, uniquePrompt } from '../support/harness';
import { waitUntil } from '../support/wait-until';

const uiUrl = (process.env.TEMPORAL_UI_URL ?? '').replace(/\/+$/, '');
const modelSummary = (call: number) => `${DEFAULT_MODEL} · call ${call} · max_tokens 1024`;
/** The activities of the ticker → price chain, in history order, as the UI should name them. */
const EXPECTED_ACTIVITIES = [
  { type: 'callModel', summary: modelSummary(1) },
  { type: 'get_ticker_symbol', summary: 'get_ticker_symbol(company_name="General Motors")' },
  { type: 'callModel', summary: modelSummary(2) },
  { type: 'get_current_stock_price', summary: 'get_current_stock_price(symbol="GM")' },
  { type: 'callModel', summary: modelSummary(3) },
];
const stamp = `webui-${Date.now()}`;
const doneId = `${stamp}-completed`;
const openId = `${stamp}-open`;

// Launched by the first test that needs it, so that a missing Chromium fails every test with its message.
/** How long the page or the server's lists may take to show what a test waits for. */
const UI_WAIT = { timeoutMs: 30_000, everyMs: 250 };

let browser: Promise<Browser> | undefined;
let h: Harness | undefined;
let prompt: string;

/** Runs body on a fresh page; on failure saves failure-<name>.png and names it in the error. */
async function withPage(name: string, body: (page: Page) => Promise<void>): Promise<void> {
  browser ??= launchChromium();
  const { context, page, pageErrors } = await newPage(await browser);
  try {
    await body(page);
  } catch (error) {
    const shot = await saveScreenshot(page, `failure-${name}`).catch((e: unknown) => `(no screenshot: ${String(e)})`);
    if (error instanceof Error) {
      error.message += `\n  page: ${page.url()}\n  screenshot: ${shot}${pageErrors.length ? `\n  page errors: ${pageErrors.join(' | ')}` : ''}`;
    }
    throw error;
  } finally {
    await context.close();
  }
}

/** The text of one of the UI's code viewers (CodeMirror: one .cm-line per line), parsed as the JSON it shows. */
async function shownJson(codeViewer: Locator): Promise<unknown> {
  await codeViewer.scrollIntoViewIfNeeded();
  return waitUntil(
    'the code viewer to show complete JSON',
    async () => JSON.parse((await codeViewer.innerText()).replace(/\u00a0/g, ' ')) as unknown,
    UI_WAIT,
  );
}

async function listQuery(query: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of h!.client.workflow.list({ query })) ids.push(execution.workflowId);
  return ids.sort();
}

before(
  async () => {
    assert.ok(
      uiUrl,
      'TEMPORAL_UI_URL is not set: run this test with `npx tsx scripts/run-tests.ts web-ui`, which starts a dev server with its Web UI.',
    );
    h = await startHarness();
    prompt = uniquePrompt('What is the current stock price of General Motors?');
    const [done] = await Promise.all([
      h.conversations.sendMessage(doneId, prompt, { start: { tools: STOCK_TOOLS, closeAfterFirstReply: true } }),
      h.conversations.sendMessage(openId, uniquePrompt('What is the current stock price of General Motors?'), {
        start: {
          tools: STOCK_TOOLS,
        },
      }),
    ]);
    assert.match(done.text, /38\.50/);
    assert.equal((await h.conversations.waitForResult(doneId)).status, 'completed');
  },
  { timeout: 120_000 },
);

after(async () => {
  await h?.conversations.end(openId).catch(() => undefined);
  await browser?.then((b) => b.close()).catch(() => undefined);
  await h?.close();
});

describe('the Temporal Web UI', { timeout: 120_000 }, () => {
  test('the history shows both model-call → tool steps with summaries, inputs and results', async () => {
    await withPage('history', async (page) => {
      await page.goto(`${uiUrl}/namespaces/${namespace}/workflows/${encodeURIComponent(doneId)}`);
      // The UI redirects to the latest run's history: /workflows/<id>/<runId>/history.
      await page.waitForURL(/\/workflows\/[^/]+\/[0-9a-f-]{36}\/history/);
      await page.getByRole('heading', { name: 'Event History' }).waitFor();
      await page.getByText(doneId, { exact: true }).first().waitFor();
      const summaryRows = page.locator('tr[data-testid="event-summary-row"]');
      await summaryRows.first().waitFor();
      await saveScreenshot(page, 'history');

      // Compact: one row per activity (scheduled/started/completed grouped), with its type and summary.
      await page.getByTestId('compact').click();
      await summaryRows.filter({ hasText: 'get_current_stock_price(symbol="GM")' }).first().waitFor();
      const rows = await summaryRows.evaluateAll((trs) =>
        trs.map((tr) => ({
          eventId: Number(tr.getAttribute('data-eventid')),
          cells: Array.from(tr.querySelectorAll('td'), (td) => td.innerText.replace(/\s+/g, ' ').trim()),
        })),
      );
      const activities = rows
        .filter((row) => row.cells.includes('Activity')) // not "Local Activity" (describeTools), not the update
        .sort((a, b) => a.eventId - b.eventId)
        .map((row) => {
          const details = row.cells.at(-1) ?? '';
          const match = /Activity Type (\S+) Summary (.+?) Attempt \d+/.exec(details);
          assert.ok(match, `activity row ${row.eventId} shows no type and summary: ${details}`);
          return { eventId: row.eventId, type: match[1], summary: match[2] };
        });
      assert.deepEqual(
        activities.map(({ type, summary }) => ({ type, summary })),
        EXPECTED_ACTIVITIES,
      );
      await saveScreenshot(page.locator('table').filter({ has: summaryRows }), 'history-compact');

      // Expand each activity: its scheduled event shows the input, its completed event the result.
      const shown: { input: unknown; result: unknown; text: string }[] = [];
      for (const [index, activity] of activities.entries()) {
        const row = page.locator(`tr[data-testid="event-summary-row"][data-eventid="${activity.eventId}"]`);
        await row.click();
        const expanded = row.locator('xpath=following-sibling::tr[1][@data-testid="event-summary-row-expanded"]');
        await expanded.getByText('Activity Task Completed', { exact: true }).waitFor();
        const text = squash(await expanded.innerText());
        assert.match(
          text,
          new RegExp(
            `Activity Task Scheduled .*Activity Type ${activity.type} .*Input .*Activity Task Completed .*Result`,
          ),
        );
        const viewers = expanded.locator('.cm-content');
        assert.equal(
          await viewers.count(),
          2,
          `activity ${activity.type} (event ${activity.eventId}) shows an input and a result`,
        );
        shown.push({ input: await shownJson(viewers.nth(0)), result: await shownJson(viewers.nth(1)), text });
        await saveScreenshot(expanded, `history-${index + 1}-${activity.type}`);
      }
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const [call1, ticker, call2, price, call3] = shown as { input: any; result: any; text: string }[];

      // Model call 1: the user's question in, the get_ticker_symbol tool_use out.
      assert.deepEqual(call1!.input.newMessages, [{ role: 'user', content: prompt }]);
      assert.equal(call1!.input.callNumber, 1);
      const tickerUse = call1!.result.content.find((b: { type: string }) => b.type === 'tool_use');
      assert.deepEqual([tickerUse?.name, tickerUse?.input], ['get_ticker_symbol', { company_name: 'General Motors' }]);
      assert.equal(call1!.result.stop_reason, 'tool_use');

      // The tool execution for that tool_use: its input and the result GM.
      assert.deepEqual(ticker!.input.input, { company_name: 'General Motors' });
      assert.equal(ticker!.input.protocol, 'native');
      // The key is named by the orchestrator (model call 1, its first tool call); the activity by the tool_use id.
      assert.match(ticker!.input.idempotencyKey, new RegExp(`^${doneId}/[0-9a-f-]{36}/1-0$`));
      assert.deepEqual(ticker!.result, { ok: true, content: 'GM' });
      assert.match(ticker!.text, new RegExp(`Activity ID tool-${tickerUse.id}\\b`));

      // Model call 2: the tool_result GM in, the get_current_stock_price tool_use out.
      assert.deepEqual(call2!.input.newMessages, [
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: tickerUse.id, content: 'GM' }] },
      ]);
      const priceUse = call2!.result.content.find((b: { type: string }) => b.type === 'tool_use');
      assert.deepEqual([priceUse?.name, priceUse?.input], ['get_current_stock_price', { symbol: 'GM' }]);

      assert.deepEqual(price!.input.input, { symbol: 'GM' });
      assert.deepEqual(price!.result, { ok: true, content: '38.50' });
      assert.match(price!.text, new RegExp(`Activity ID tool-${priceUse.id}\\b`));

      // Model call 3: the tool_result 38.50 in, the answer out.
      assert.deepEqual(call3!.input.newMessages, [
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: priceUse.id, content: '38.50' }] },
      ]);
      assert.equal(call3!.result.stop_reason, 'end_turn');
      assert.match(call3!.result.content.map((b: { text?: string }) => b.text ?? '').join(''), /\$38\.50/);
    });
  });

  test('the User Metadata tab shows the first user message as the static summary', async () => {
    await withPage('user-metadata', async (page) => {
      await page.goto(`${uiUrl}/namespaces/${namespace}/workflows/${encodeURIComponent(doneId)}`);
      await page.getByTestId('user-metadata-tab').click();
      await page.waitForURL(/\/user-metadata$/);
      // Summary and details are Markdown, each rendered by the UI in an iframe under its heading.
      const rendered = (heading: string) =>
        page
          .getByRole('heading', { name: heading, exact: true })
          .locator('xpath=../..')
          .locator('iframe')
          .contentFrame()
          .locator('body');
      const summary = rendered('Summary');
      await summary.getByText(prompt, { exact: false }).waitFor();
      assert.equal(squash(await summary.innerText()), prompt);
      await rendered('Details')
        .getByText('tools: get_ticker_symbol, get_current_stock_price', { exact: false })
        .waitFor();
      // "Events with Metadata": the five activities by their summaries, in order, each completed.
      const events = page.getByRole('heading', { name: 'Events with Metadata', exact: true }).locator('xpath=../..');
      await events.getByText('get_current_stock_price(symbol="GM")', { exact: true }).waitFor();
      assert.equal(
        squash(await events.innerText()),
        `Events with Metadata ${EXPECTED_ACTIVITIES.map(({ summary }) => `Activity ${summary} Completed`).join(' ')}`,
      );
      await saveScreenshot(page, 'user-metadata');
    });
  });

  test('the workflows list filters by the search attribute ConversationStatus', async () => {
    // Scoped to this test's task queue, so other tests' conversations on the same server do not matter.
    const scope = `TaskQueue="${h!.taskQueue}"`;
    const completedQuery = `ConversationStatus="completed" AND ${scope}`;
    const openQuery = `ConversationStatus="awaiting_user" AND ${scope}`;
    // Visibility is eventually consistent: wait until the server's list answers as the UI should show it.
    await waitUntil(
      'visibility to index both conversations',
      async () =>
        (await listQuery(completedQuery)).join() === doneId && (await listQuery(openQuery)).join() === openId
          ? true
          : undefined,
      UI_WAIT,
    );

    await withPage('list', async (page) => {
      for (const [status, query, shown, hidden] of [
        ['completed', completedQuery, doneId, openId],
        ['awaiting_user', openQuery, openId, doneId],
      ] as const) {
        await page.goto(`${uiUrl}/namespaces/${namespace}/workflows?query=${encodeURIComponent(query)}`);
        const table = page.locator('table');
        await table.getByRole('link', { name: shown, exact: true }).waitFor();
        // The query became the UI's filter, and the table lists exactly the matching conversation.
        await page.getByText(`"${status}"`, { exact: true }).first().waitFor();
        const ids = (await table.getByRole('link').allInnerTexts())
          .map((t) => t.trim())
          .filter((t) => t.startsWith(stamp));
        assert.deepEqual(ids, [shown], `${query} lists ${shown} and not ${hidden}`);
        await page
          .locator('h1')
          .filter({ hasText: /^\s*1\s+Workflow\s*$/ })
          .waitFor();
        await saveScreenshot(page, `list-${status}`);
      }
    });
  });
});
