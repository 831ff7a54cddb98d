// What a conversation remembers about its turns across continue-as-new, and what it has forgotten: end() asked for
// before a run hands over still ends the conversation (`completed`, not `idle_timeout` a day later), and a caller
// waiting for a turn whose outcome is no longer kept is told so at once instead of waiting for the conversation's end.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConversationError } from '../../client/errors';
import { KEPT_OUTCOMES } from '../../workflows/conversation-state';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import { waitUntil } from '../support/wait-until';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

describe('across continue-as-new', () => {
  test('end() sent before the run continues as new still completes the conversation', async () => {
    const prompt = uniquePrompt("What's the weather in Paris?");
    // The first model call is slow, so end() arrives while the first run is still working on the turn.
    h.mock.script(prompt, [{ demo: true, delayMs: 2_000 }]);
    const id = `end-before-can-${Date.now()}`;
    const turn = h.conversations.sendMessage(id, prompt, {
      start: {
        tools: ['get_weather'],
        continueAsNewAfterModelCalls: 1,
        timeouts: { idle: '1 hour' },
      },
    });
    await waitUntil('the model call', () => h.mock.requestsFor(prompt).length > 0);
    await h.conversations.end(id);
    const reply = await turn;
    assert.match(reply.text, /Paris/);

    // With the bug, the next run forgot the request and waited an hour for a message: give it a minute.
    const result = await Promise.race([
      h.conversations.waitForResult(id),
      sleep(60_000).then(() => assert.fail('still open a minute after end(): the request was lost in the handover')),
    ]);
    assert.equal(result.status, 'completed');
    const description = await h.client.workflow.getHandle(id).describe();
    assert.notEqual(description.runId, description.raw.workflowExecutionInfo?.firstRunId, 'it did continue as new');
  });
});

describe('a turn whose outcome is no longer kept', () => {
  test(`awaitTurn is refused at once, once ${KEPT_OUTCOMES} later turns have pushed it out`, async () => {
    const id = `evicted-turn-${Date.now()}`;
    await h.conversations.sendMessage(id, uniquePrompt('Message 1'), { start: { timeouts: { idle: '10 minutes' } } });
    for (let n = 2; n <= KEPT_OUTCOMES + 1; n++) await h.conversations.sendMessage(id, `Message ${n}`);

    const kept = await h.conversations.awaitTurn(id, KEPT_OUTCOMES + 1);
    assert.match(kept.text, new RegExp(`Message ${KEPT_OUTCOMES + 1}`));
    // A long deadline: with the bug this call waited until the conversation ended (or the deadline passed).
    const forgotten = await h.conversations.awaitTurn(id, 1, { timeoutMs: 10 * 60_000 }).then(
      () => assert.fail('turn 1 was answered'),
      (error: unknown) => error,
    );
    assert.ok(forgotten instanceof ConversationError, String(forgotten));
    assert.equal(forgotten.code, 'rejected');
    assert.match(forgotten.message, /no longer kept/);
    await assert.rejects(h.conversations.awaitTurn(id, 99), /has no turn 99/);
    await h.conversations.end(id);
    assert.equal((await h.conversations.waitForResult(id)).status, 'completed');
  });
});
