// The local Messages API and structured outputs (`output_config.format`), through the real SDK: a malformed format is
// the API's 400; a scripted answer goes out as JSON text, streamed or not; an answer that is not JSON cannot be
// scripted (constrained decoding makes it JSON), but one that breaks the schema's bounds can: the caller checks those.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages';
import { DEMO_MODEL } from '../../testing/messages-api/fixtures';
import { withMessagesApi } from '../../testing/messages-api/sdk-client';

const schema = {
  type: 'object',
  properties: { symbol: { type: 'string' }, price: { type: 'number', description: '{exclusiveMinimum: 0}' } },
  required: ['symbol', 'price'],
  additionalProperties: false,
};
const request = (question: string, format: unknown = { type: 'json_schema', schema }) =>
  ({
    model: DEMO_MODEL,
    max_tokens: 256,
    messages: [{ role: 'user', content: question }],
    output_config: { format },
  }) as MessageCreateParamsNonStreaming;

describe('local Messages API: structured outputs', () => {
  test('a scripted json block is the reply text, as JSON, streamed and not', async () => {
    await withMessagesApi(async (server, client) => {
      const answer = { symbol: 'GM', price: -1 }; // breaks a bound the API leaves to descriptions: it goes out
      server.script('Quote GM', [
        { reply: { content: [{ type: 'json', value: answer }], stop_reason: 'end_turn' } },
        { reply: { content: [{ type: 'json', value: answer }], stop_reason: 'end_turn' } },
      ]);
      const message = await client.messages.create(request('Quote GM'));
      assert.deepEqual(message.content, [{ type: 'text', text: JSON.stringify(answer), citations: null }]);
      const streamed = await client.messages.stream(request('Quote GM')).finalMessage();
      assert.equal((streamed.content[0] as { text: string }).text, JSON.stringify(answer));
    });
  });

  test('a scripted answer that is not JSON is a 400 that says so', async () => {
    await withMessagesApi(async (server, client) => {
      server.script('Quote GM', [
        { reply: { content: [{ type: 'text', text: 'GM: 38.50' }], stop_reason: 'end_turn' } },
      ]);
      const error = await client.messages.create(request('Quote GM')).then(
        () => assert.fail('expected a 400'),
        (err: unknown) => err,
      );
      assert.ok(error instanceof Anthropic.BadRequestError);
      assert.match(error.message, /asks for output_config.format, but the reply text is not JSON: GM: 38.50/);
    });
  });

  test('malformed formats and schemas outside the subset are the API’s 400s', async () => {
    const cases: [unknown, RegExp][] = [
      [{ type: 'json', schema }, /output_config.format.type: Input should be 'json_schema'/],
      [{ type: 'json_schema' }, /output_config.format.schema: Field required/],
      [{ type: 'json_schema', schema: { ...schema, additionalProperties: true } }, /'additionalProperties' must be/],
      [
        { type: 'json_schema', schema: { ...schema, properties: { price: { type: 'number', minimum: 0 } } } },
        /properties.price: The schema keyword 'minimum' is not supported/,
      ],
      [
        { type: 'json_schema', schema: { ...schema, properties: { next: { $ref: '#' } }, required: [] } },
        /Recursive schemas are not supported/,
      ],
      [
        {
          type: 'json_schema',
          schema: {
            ...schema,
            properties: { node: { $ref: '#/$defs/Node' } },
            required: [],
            $defs: {
              Node: {
                type: 'object',
                properties: { child: { $ref: '#/$defs/Node' } },
                additionalProperties: false,
              },
            },
          },
        },
        /Recursive schemas are not supported/,
      ],
    ];
    for (const [format, pattern] of cases) {
      await withMessagesApi(async (_server, client) => {
        const error = await client.messages.create(request('Hi', format)).then(
          () => assert.fail(`expected a 400 for ${JSON.stringify(format)}`),
          (err: unknown) => err,
        );
        assert.ok(error instanceof Anthropic.BadRequestError);
        assert.match(error.message, pattern);
      });
    }
  });
});
