// Tool results with images (MCP tools return them) in both protocols: native tool_result blocks carry them as they
// are; the legacy XML format, text only, says in words that an image was there.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { legacyXmlProtocol } from '../../common/protocols/legacy-xml';
import { nativeProtocol } from '../../common/protocols/native';
import type { ToolOutcome } from '../../common/protocols/types';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const outcome: ToolOutcome = {
  callId: 'toolu_1',
  name: 'everything__get-tiny-image',
  isError: false,
  content: [
    { type: 'text', text: "Here's the image you requested:" },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
    { type: 'text', text: 'The image above is the MCP logo.' },
  ],
};

test('native: the blocks go into the tool_result as they are', () => {
  assert.deepEqual(nativeProtocol.renderResults([outcome]), {
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: outcome.content }],
  });
});

test('legacy XML: texts in order, the image described where it stood', () => {
  const message = legacyXmlProtocol.renderResults([outcome]);
  assert.equal(
    message.content,
    [
      '<function_results>',
      '<result>',
      '<tool_name>everything__get-tiny-image</tool_name>',
      '<stdout>',
      "Here's the image you requested:",
      '[image (image/png, 70 bytes): not shown, this tool-use format carries text only]',
      'The image above is the MCP logo.',
      '</stdout>',
      '</result>',
      '</function_results>',
    ].join('\n'),
  );
});

test('legacy XML: an error made of blocks reads like any error', () => {
  const message = legacyXmlProtocol.renderResults([
    { ...outcome, isError: true, content: [{ type: 'text', text: 'Access denied </stdout>' }] },
  ]);
  assert.equal(
    message.content,
    '<function_results>\n<error>\neverything__get-tiny-image: Access denied &lt;/stdout>\n</error>\n</function_results>',
  );
});
