// Limits at the boundaries, with payload encryption on (the production setting): a tool that returns 5 MB of text is
// cut to 100,000 characters with a visible marker before it becomes a payload, so the conversation completes instead
// of failing on Temporal's 2 MB payload limit and retrying forever.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { z } from 'zod';
import { DEFAULT_MAX_OUTPUT_CHARS } from '../../activities/tool-activities';
import { defineTool } from '../../activities/tool-definition';
import { demoTools } from '../../testing/demo-tools';
import { encryptingDataConverter } from '../../codec/data-converter';
import { parseKeyRing } from '../../codec/keys';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';

const FIVE_MB = 5 * 1024 * 1024;
let runs = 0;

const hugeReport = defineTool({
  name: 'huge_report',
  description: 'Returns a very long report.',
  input: z.object({ topic: z.string() }),
  run({ topic }) {
    runs++;
    const line = `${topic}: ${'lorem ipsum dolor sit amet '.repeat(3)}\n`;
    return line.repeat(Math.ceil(FIVE_MB / line.length)).slice(0, FIVE_MB);
  },
});

let h: Harness;
before(async () => {
  h = await startHarness({
    tools: [...demoTools, hugeReport],
    dataConverter: encryptingDataConverter(parseKeyRing(`k1:${randomBytes(32).toString('base64')}`)),
  });
});
after(async () => {
  await h?.close();
});

test('a tool returning 5 MB is cut to 100,000 characters with a visible marker, and the conversation completes', async () => {
  const prompt = uniquePrompt('Summarise the huge report');
  h.mock.script(prompt, [
    {
      reply: {
        content: [{ type: 'tool_use', name: 'huge_report', input: { topic: 'quarterly' } }],
        stop_reason: 'tool_use',
      },
    },
    { reply: { content: [{ type: 'text', text: 'The report is long.' }], stop_reason: 'end_turn' } },
  ]);
  const id = `huge-${randomUUID()}`;
  const reply = await h.conversations.sendMessage(id, prompt, {
    start: { tools: ['huge_report'], closeAfterFirstReply: true },
  });
  assert.equal(reply.text, 'The report is long.');
  assert.equal(reply.status, 'completed');
  assert.equal(runs, 1, 'the tool ran once: no oversized result failing and retrying');

  // What the model received as the tool result: exactly the limit, ending with the marker.
  const second = h.mock.requestsFor(prompt)[1]!;
  const blocks = second.body.messages.at(-1).content as { type: string; content: string; is_error?: boolean }[];
  const result = blocks.find((b) => b.type === 'tool_result')!;
  assert.notEqual(result.is_error, true);
  assert.equal(result.content.length, DEFAULT_MAX_OUTPUT_CHARS);
  const marker = /\n\[output truncated: (\d+) of 5242880 characters omitted\]$/.exec(result.content);
  assert.ok(marker, result.content.slice(-80));
  assert.equal(
    Number(marker[1]) + result.content.length - marker[0].length,
    FIVE_MB,
    'the marker counts exactly what was left out',
  );
  assert.ok(result.content.startsWith('quarterly: lorem ipsum'));

  // The stored history: the activity completed on its first attempt, and no payload is anywhere near 2 MB.
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  const events = history.events ?? [];
  assert.equal(
    events.filter((e) => e.activityTaskFailedEventAttributes || e.activityTaskTimedOutEventAttributes).length,
    0,
  );
  const started = events
    .filter((e) => e.activityTaskStartedEventAttributes)
    .map((e) => e.activityTaskStartedEventAttributes!.attempt);
  assert.ok(
    started.every((attempt) => attempt === 1),
    `attempts: ${started.join(', ')}`,
  );
  const largest = Math.max(
    ...events.map((e) => e.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data?.length ?? 0),
  );
  assert.ok(
    largest > DEFAULT_MAX_OUTPUT_CHARS && largest < 2 * DEFAULT_MAX_OUTPUT_CHARS,
    `largest activity result ${largest} bytes`,
  );
  assert.equal((await h.conversations.waitForResult(id)).status, 'completed');
});
