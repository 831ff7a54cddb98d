// What may enter the transcript from a tool or an MCP server: cut to a limit with a marker that counts what was left
// out, and well-formed (a lone surrogate becomes U+FFFD; a pair split by the cut too).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { boundedMessage, boundedOutcome, limitText } from '../../common/bounded-text';
import { isWellFormed, truncate, wellFormed } from '../../common/safe-text';

describe('wellFormed', () => {
  test('lone surrogates become U+FFFD; pairs, NUL and everything else stay', () => {
    assert.equal(wellFormed('a\ud800b\udc00c'), 'a\ufffdb\ufffdc');
    assert.equal(wellFormed('\udc00\ud800'), '\ufffd\ufffd', 'in the wrong order they are not a pair');
    assert.equal(wellFormed('😀 \u0000 é'), '😀 \u0000 é');
  });
});

describe('truncate', () => {
  test('a text within the limit stays as it is', () => {
    assert.equal(truncate('short', 10), 'short');
  });

  test('a longer one is exactly the limit, marker included, and the marker counts what was left out', () => {
    const cut = truncate('x'.repeat(1_000), 100);
    assert.equal(cut.length, 100);
    const [, omitted, total] = /\n\[output truncated: (\d+) of (\d+) characters omitted\]$/.exec(cut)!;
    assert.equal(Number(total), 1_000);
    assert.equal(cut.indexOf('\n') + Number(omitted), 1_000);
  });

  test('a pair split by the cut leaves no lone half', () => {
    const text = 'a'.repeat(50) + '😀'.repeat(500);
    for (let max = 90; max < 100; max++) assert.ok(isWellFormed(truncate(text, max)));
  });
});

describe('limitText', () => {
  test('text blocks within the limit in all; the one that crosses it is cut; images stay', () => {
    const image = {
      type: 'image' as const,
      source: { type: 'base64' as const, media_type: 'image/png' as const, data: 'AA==' },
    };
    const blocks = limitText(
      [
        { type: 'text' as const, text: 'a'.repeat(60) },
        image,
        { type: 'text' as const, text: 'b\ud800'.repeat(60) },
        { type: 'text' as const, text: 'c' },
      ],
      150,
    );
    assert.deepEqual(
      blocks.map((b) => b.type),
      ['text', 'image', 'text'],
    );
    const texts = blocks.flatMap((b) => (b.type === 'text' ? [b.text] : []));
    assert.equal(texts.join('').length, 150);
    assert.ok(texts.every(isWellFormed));
  });
});

describe('what the orchestrator writes', () => {
  test('an outcome: its text bounded, whatever its shape', () => {
    const outcome = { callId: 'c', name: 'f', isError: true, content: 'E'.repeat(10_000) };
    assert.equal((boundedOutcome(outcome, 1_000).content as string).length, 1_000);
    const blocks = boundedOutcome({ ...outcome, content: [{ type: 'text', text: 'E'.repeat(10_000) }] }, 1_000);
    assert.equal((blocks.content as { text: string }[])[0]!.text.length, 1_000);
  });

  test('a native message: every text and tool_result bounded', () => {
    const huge = 'x'.repeat(5_000);
    const correction = boundedMessage({ role: 'user', content: huge }, 'native', 1_000);
    assert.equal((correction.content as string).length, 1_000);
    const results = boundedMessage(
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: huge },
          { type: 'tool_result', tool_use_id: 't2', content: [{ type: 'text', text: huge }] },
          { type: 'text', text: huge },
        ],
      },
      'native',
      1_000,
    );
    assert.ok(JSON.stringify(results).length < 3_500);
  });

  test('a legacy message holds every result of a reply in one text, each bounded already: only made well-formed', () => {
    const text = `<function_results>\n${'x'.repeat(5_000)}\ud800\n</function_results>`;
    const message = boundedMessage({ role: 'user', content: text }, 'legacy-xml', 1_000);
    assert.equal((message.content as string).length, text.length);
    assert.ok(isWellFormed(message.content as string));
  });
});
