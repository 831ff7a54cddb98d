// An MCP tool's result as tool_result blocks: what the model reads for each kind of MCP content, and the limits.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { limitText, toToolResultBlocks } from '../../activities/mcp/mcp-result-content';

const LIMITS = { maxTextChars: 1_000, maxImageChars: 1_000 };
const PNG = Buffer.from('\x89PNG\r\n\x1a\n tiny', 'latin1').toString('base64');

test('text stays text, an image the API reads becomes an image block, in the tool’s order', () => {
  const result: CallToolResult = {
    content: [
      { type: 'text', text: 'Here it is:' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      { type: 'text', text: 'The logo.' },
    ],
  };
  assert.deepEqual(toToolResultBlocks(result, LIMITS), [
    { type: 'text', text: 'Here it is:' },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
    { type: 'text', text: 'The logo.' },
  ]);
});

test('what the API cannot take is described in words: other image types, audio, resources, links', () => {
  const result: CallToolResult = {
    content: [
      { type: 'image', data: 'PHN2Zz48L3N2Zz4=', mimeType: 'image/svg+xml' },
      { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
      { type: 'resource', resource: { uri: 'file:///notes.md', mimeType: 'text/markdown', text: '# Notes' } },
      { type: 'resource', resource: { uri: 'file:///a.bin', blob: 'AAECAw==' } },
      {
        type: 'resource_link',
        uri: 'demo://r/1',
        name: 'Report',
        mimeType: 'application/pdf',
        size: 2048,
        description: 'Q3 figures',
      },
    ],
  };
  assert.deepEqual(
    toToolResultBlocks(result, LIMITS).map((b) => (b.type === 'text' ? b.text : b.type)),
    [
      '[image not shown: image/svg+xml is not an image type the model reads (11 bytes)]',
      '[audio not shown: audio/wav, 4 bytes]',
      '[resource file:///notes.md (text/markdown)]\n# Notes',
      '[binary resource file:///a.bin, 4 bytes, not shown]',
      '[resource link] Report <demo://r/1> (application/pdf, 2048 bytes): Q3 figures',
    ],
  );
});

test('structured content without a text copy is sent as JSON; an empty result says so', () => {
  assert.deepEqual(toToolResultBlocks({ content: [], structuredContent: { temperature: 21 } }, LIMITS), [
    { type: 'text', text: '{"temperature":21}' },
  ]);
  assert.deepEqual(toToolResultBlocks({ content: [] }, LIMITS), [
    { type: 'text', text: '(the tool returned no content)' },
  ]);
  assert.deepEqual(toToolResultBlocks({ content: [], isError: true }, LIMITS), [
    { type: 'text', text: '(the tool failed and said nothing more)' },
  ]);
});

test('images past the limit are replaced by a line saying so; the ones before it stay', () => {
  const big = 'A'.repeat(800);
  const blocks = toToolResultBlocks(
    {
      content: [
        { type: 'image', data: big, mimeType: 'image/jpeg' },
        { type: 'image', data: big, mimeType: 'image/jpeg' },
      ],
    },
    LIMITS,
  );
  assert.equal(blocks[0]!.type, 'image');
  assert.deepEqual(blocks[1], {
    type: 'text',
    text: '[image omitted: image/jpeg, 600 bytes, over the 1000-character limit for images in one result]',
  });
});

test('text past the limit is cut with the visible marker counting over the whole result', () => {
  const blocks = limitText(
    [
      { type: 'text', text: 'a'.repeat(30) },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
      { type: 'text', text: 'b'.repeat(60) },
      { type: 'text', text: 'c'.repeat(60) },
    ],
    100,
  );
  const texts = blocks.filter((b) => b.type === 'text').map((b) => b.text);
  assert.equal(texts.join('').length, 100, 'exactly the limit, marker included');
  assert.equal(texts.length, 2, 'the blocks after the cut are left out');
  assert.match(texts[1]!, /^b+\n\[output truncated: (\d+) of 150 characters omitted\]$/);
  const omitted = Number(/(\d+) of 150/.exec(texts[1]!)![1]);
  assert.equal(30 + texts[1]!.indexOf('\n'), 150 - omitted);
  assert.equal(blocks[1]!.type, 'image', 'images keep their place');
  const short = [{ type: 'text' as const, text: 'short' }];
  assert.equal(limitText(short, 100), short);
});
