// Readers that come and go — page reloads, closed tabs — must never lock a conversation. Each parked reader holds a
// long poll, an update, and Temporal lets a workflow have only 10 in flight: the conversation takes a few polls at
// once (MAX_POLLS_IN_FLIGHT), sends the other readers to its query, and ends every poll by itself within
// MAX_POLL_WAIT_MS, whether its reader is still there or not. So a message and an approval go through at once after
// 50 readers left in the middle of their polls.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MAX_POLLS_IN_FLIGHT } from '../../streaming/stream-events';
import { pollEventsUpdate, streamEventsQuery } from '../../common/workflow-messages';
import { startDevServer } from '../../testing/dev-server';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import { failedWorkflowTasks } from '../support/hostile';
import { slotCountingClient, updatesOf } from '../support/updates-in-flight';
import { approvalAskedFor } from '../support/awaiting-approval';
import { waitUntil } from '../support/wait-until';

const READERS = 50;
/** How often the test looks (reading a history, or the state, with 50 readers at work). */
const POLL = { everyMs: 200 };

let h: Harness;
let counting: Awaited<ReturnType<typeof slotCountingClient>>;
before(async () => {
  h = await startHarness();
  counting = await slotCountingClient(h, ['buy_stock']);
});
after(async () => {
  await counting?.close();
  await h?.close();
});

const pollsOf = (id: string) => updatesOf(h.client, id, 'pollEvents');

test(
  `${READERS} readers leave in the middle of their long polls: a message and an approval then go through at once, and the polls end by themselves`,
  {
    // 40–86 s in whole runs on two cores (the polls alone end within MAX_POLL_WAIT_MS, 20 s): room for a busy machine.
    timeout: 180_000,
  },
  async () => {
    const id = `readers-come-and-go-${Date.now()}`;
    await h.conversations.sendMessage(id, uniquePrompt('Hello there'), { start: { tools: ['buy_stock'] } });

    // Every reader reads the log and parks: a few on long polls, the others on the query.
    const leave = new AbortController();
    let seen = 0;
    const readers = Promise.all(
      Array.from({ length: READERS }, async () => {
        for await (const item of h.conversations.events(id, { signal: leave.signal })) if (item.offset >= 0) seen++;
      }),
    );
    // A reader that fails while the test still waits fails the test below, not the process (nor, in a test process
    // shared with other files, whichever test runs then).
    readers.catch(() => undefined);
    try {
      await waitUntil('the long polls to fill', async () => (await pollsOf(id)).inFlight >= MAX_POLLS_IN_FLIGHT, POLL);
      await waitUntil('every reader to read the first turn', () => seen >= READERS * 5, POLL); // each read the first turn's 5 events
    } finally {
      leave.abort();
    }
    await readers; // they end quietly

    counting.exhausted.count = 0;
    const counted = counting.conversations;
    const turn = counted.sendMessage(id, uniquePrompt('Buy 3 shares of General Motors'));
    const pending = await approvalAskedFor(counted, id, POLL);
    await counted.approveToolCall(id, {
      callId: pending.callId,
      argumentsDigest: pending.argumentsDigest,
      approve: true,
    });
    const result = await turn;
    assert.match(result.text, /filled/i);
    assert.equal(
      counting.exhausted.count,
      0,
      'neither the message nor the approval was refused for lack of an update slot',
    );

    // No reader is left: every poll ends by itself, and never were more in flight than the conversation takes.
    const polls = await waitUntil(
      'the long polls to end',
      async () => {
        const now = await pollsOf(id);
        return now.inFlight === 0 && now;
      },
      POLL,
    );
    assert.ok(polls.accepted >= MAX_POLLS_IN_FLIGHT);
    assert.ok(polls.mostAtOnce <= MAX_POLLS_IN_FLIGHT, `${polls.mostAtOnce} long polls were in flight at once`);
    await h.conversations.end(id);
  },
);

/**
 * Temporal suggests continue-as-new at 4,096 events by default; a server of this test's own suggests it at this many,
 * so the reader's polls grow the history there in a few seconds instead of writing 4,096 events.
 */
const SUGGEST_CONTINUE_AS_NEW_AT = 300;

test(
  'a reader left open on a waiting conversation grows its history: the conversation continues as new when Temporal suggests it, and still takes messages',
  {
    timeout: 300_000,
  },
  async () => {
    const server = await startDevServer({
      ...(process.env.TEMPORAL_CLI_PATH && { cliPath: process.env.TEMPORAL_CLI_PATH }),
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': SUGGEST_CONTINUE_AS_NEW_AT },
    });
    const own = await startHarness({ address: server.address }).catch(async (err: unknown) => {
      await server.stop();
      throw err;
    });
    try {
      const id = `reader-left-open-${Date.now()}`;
      await own.conversations.sendMessage(id, uniquePrompt('Hello there'), { start: {} });
      const handle = own.client.workflow.getHandle(id);
      const firstRun = (await handle.describe()).runId;
      // Each answered poll is an update in the history, as a parked reader's are every MAX_POLL_WAIT_MS while nobody
      // writes, until Temporal suggests continue-as-new.
      let from = 0;
      let polls = 0;
      while ((await handle.describe()).runId === firstRun && polls < SUGGEST_CONTINUE_AS_NEW_AT) {
        for (let i = 0; i < 20; i++, polls++) {
          const page = await handle
            .executeUpdate(pollEventsUpdate, { args: [{ from, waitMs: 0 }] })
            .catch(() => undefined);
          from = page?.next ?? from;
        }
      }
      assert.notEqual((await handle.describe()).runId, firstRun, `still the first run after ${polls} polls`);
      const firstHistory = await own.client.workflow.getHandle(id, firstRun).fetchHistory();
      assert.ok(
        (firstHistory.events?.length ?? 0) >= SUGGEST_CONTINUE_AS_NEW_AT,
        `the first run continued as new at ${firstHistory.events?.length} events, when Temporal suggested it`,
      );
      // The next run has everything: the message is answered, the log's offsets go on.
      const reply = await own.conversations.sendMessage(id, uniquePrompt('Still there?'));
      assert.match(reply.text, /Still there/);
      const state = await own.conversations.getState(id);
      assert.equal(state.runs, 2);
      const page = await handle.query(streamEventsQuery, 0);
      assert.deepEqual(
        page.events.map(({ offset }) => offset),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
      );
      assert.equal(await failedWorkflowTasks(own, id), 0);
      await own.conversations.end(id);
    } finally {
      await own.close();
      await server.stop();
    }
  },
);
