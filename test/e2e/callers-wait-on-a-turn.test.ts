// Callers that wait on a turn (`sendMessage`, `awaitTurn`) must never lock a conversation. Each holds an update until
// its turn ends, and Temporal lets a workflow have only 10 in flight: were they all taken, not even the approval the
// turn waits for could get in. So a conversation takes MAX_TURN_WAITERS such callers at once and answers the next ones
// `busy` at once, sending nothing; with its long polls full too, an approval still goes through.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ConversationError } from '../../client/errors';
import { MAX_POLLS_IN_FLIGHT } from '../../streaming/stream-events';
import type { TurnResult } from '../../common/conversation-types';
import { MAX_TURN_WAITERS } from '../../workflows/turn-waiters';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import { failedWorkflowTasks } from '../support/hostile';
import { slotCountingClient, updatesOf } from '../support/updates-in-flight';
import { approvalAskedFor } from '../support/awaiting-approval';
import { waitUntil } from '../support/wait-until';

const EXTRA_CALLERS = 3;
/** How often the test looks (reading a history, or the state). */
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

test(
  `${MAX_TURN_WAITERS + EXTRA_CALLERS} callers wait on a turn that waits for an approval: ${EXTRA_CALLERS} are answered busy at once, the approval goes through, the others get the reply`,
  { timeout: 180_000 },
  async (t) => {
    const id = `callers-wait-${Date.now()}`;
    const { conversations, exhausted } = counting;
    await h.conversations.submitMessage(id, uniquePrompt('Buy 3 shares of General Motors'), {
      start: { tools: ['buy_stock'] },
    });
    const pending = await approvalAskedFor(h.conversations, id, POLL);

    // Readers park on the conversation's long polls, as many as it takes.
    const leave = new AbortController();
    const readers = Promise.all(
      Array.from({ length: MAX_POLLS_IN_FLIGHT + 2 }, async () => {
        for await (const item of h.conversations.events(id, { signal: leave.signal })) void item;
      }),
    );
    readers.catch(() => undefined);
    try {
      await waitUntil(
        'the long polls to fill',
        async () => (await updatesOf(h.client, id, 'pollEvents')).inFlight >= MAX_POLLS_IN_FLIGHT,
        POLL,
      );

      // More callers than the conversation takes, all at once: every other one sends a message of its own.
      const started = Date.now();
      const texts = new Map<number, string>();
      const settled: { caller: number; ms: number; result?: TurnResult; error?: unknown }[] = [];
      const callers = Array.from({ length: MAX_TURN_WAITERS + EXTRA_CALLERS }, async (_, caller) => {
        const text = uniquePrompt(`Hello there, caller ${caller}`);
        if (caller % 2 === 1) texts.set(caller, text);
        try {
          const result =
            caller % 2 === 1 ? await conversations.sendMessage(id, text) : await conversations.awaitTurn(id, 1);
          settled.push({ caller, ms: Date.now() - started, result });
        } catch (error) {
          settled.push({ caller, ms: Date.now() - started, error });
        }
      });
      // The extra callers are answered while the turn still waits for its approval.
      await waitUntil('the extra callers to be answered', () => settled.length >= EXTRA_CALLERS, POLL);
      const busy = settled.slice();
      for (const { error, ms } of busy) {
        assert.ok(error instanceof ConversationError, String(error));
        assert.equal(error.code, 'busy', error.message);
        assert.match(error.message, new RegExp(`${MAX_TURN_WAITERS} callers wait on this conversation's turns`));
        assert.ok(ms < 30_000, `answered busy after ${ms} ms`);
      }
      assert.equal((await h.conversations.getState(id)).pendingApprovals.length, 1, 'the turn still waits');

      // The approval finds a slot at once: Temporal does not refuse it for lack of one (the burst of callers may have
      // met Temporal's own limit for a moment, before the workflow refused the extra ones: their client retried).
      exhausted.count = 0;
      await conversations.approveToolCall(id, {
        callId: pending.callId,
        argumentsDigest: pending.argumentsDigest,
        approve: true,
      });
      assert.equal(exhausted.count, 0, 'the approval was not refused by Temporal for lack of an update slot');
      await Promise.all(callers);
      const answered = settled.filter(({ result }) => result);
      assert.equal(answered.length, MAX_TURN_WAITERS);
      for (const { caller, result } of answered) {
        assert.match(result!.text, caller % 2 === 1 ? /Hello there, caller/ : /filled/i);
      }

      // A busy caller's message was not taken; the others' were, once each.
      const userTexts = (await h.conversations.getTranscript(id))
        .filter(({ role }) => role === 'user')
        .map(({ content }) => (typeof content === 'string' ? content : JSON.stringify(content)));
      const taken = (caller: number) => userTexts.filter((text) => text.includes(texts.get(caller)!)).length;
      for (const { caller } of busy) if (texts.has(caller)) assert.equal(taken(caller), 0);
      for (const { caller } of answered) if (texts.has(caller)) assert.equal(taken(caller), 1);
      t.diagnostic(`busy answered after ${busy.map(({ ms }) => ms).join(', ')} ms`);
    } finally {
      leave.abort();
      await readers;
    }

    // The conversation goes on answering.
    const next = await conversations.sendMessage(id, uniquePrompt('Still there?'));
    assert.match(next.text, /Still there/);
    assert.equal(await failedWorkflowTasks(h, id), 0);
    await h.conversations.end(id);
  },
);
