// Context management on the local Messages API, through the real SDK's beta client, as the API documents it:
// compaction (`compact_20260112`) past its trigger and honoured when sent back, context editing
// (`clear_tool_uses_20250919`), a context window that refuses a prompt too long, and the 400s for what is malformed.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Anthropic, { BadRequestError } from '@anthropic-ai/sdk';
import type {
  BetaContextManagementConfig,
  BetaMessage,
  BetaMessageContentParam,
  BetaMessageParam,
  MessageCreateParamsNonStreaming,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { classifyModelError } from '../../activities/model-failure';
import { ModelFailureType } from '../../common/failure-types';
import { CLEARED_TOOL_RESULT } from '../../testing/messages-api/context-management';
import { DEMO_MODEL, DEMO_TOOLS } from '../../testing/messages-api/fixtures';
import { withMessagesApi } from '../../testing/messages-api/sdk-client';

const BETAS = ['compact-2026-01-12', 'context-management-2025-06-27'];
const compact = (value = 50_000): BetaContextManagementConfig => ({
  edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value } }],
});
/** A weather result padded to `chars` characters (about chars / 4 tokens). */
const bigResult = (chars: number) =>
  JSON.stringify({ temperature: 14, conditions: 'partly cloudy', notes: 'x'.repeat(chars) });

/** A question, then `steps` get_weather calls each answered with a result of `chars` characters. */
function chain(question: string, steps: number, chars: number): BetaMessageParam[] {
  const messages: BetaMessageParam[] = [{ role: 'user', content: question }];
  for (let i = 0; i < steps; i++) {
    const id = `toolu_${i}`;
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `Step ${i + 1}.` },
        { type: 'tool_use', id, name: 'get_weather', input: { location: 'Paris' } },
      ],
    });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: bigResult(chars) }] });
  }
  return messages;
}

function params(
  messages: BetaMessageParam[],
  contextManagement?: BetaContextManagementConfig,
  betas = BETAS,
): MessageCreateParamsNonStreaming {
  return {
    model: DEMO_MODEL,
    max_tokens: 512,
    tools: DEMO_TOOLS,
    messages,
    betas,
    ...(contextManagement && { context_management: contextManagement }),
  };
}

async function badRequest(call: Promise<unknown>): Promise<BadRequestError> {
  const error = await call.then(
    () => assert.fail('expected a 400'),
    (err: unknown) => err,
  );
  assert.ok(error instanceof BadRequestError, `expected a BadRequestError, got ${String(error)}`);
  return error;
}

describe('local Messages API: compaction (compact_20260112)', () => {
  test('past the trigger the reply opens with a compaction block, and the compaction is an iteration of its own', async () => {
    await withMessagesApi(async (_server, client) => {
      const messages = chain('What is the weather in Paris? [compaction-1]', 6, 40_000);
      const reply = await client.beta.messages.create(params(messages, compact()));
      const [block, ...rest] = reply.content;
      assert.equal(block?.type, 'compaction');
      assert.ok(block?.type === 'compaction' && block.content);
      assert.match(
        block.content,
        /<original-request>What is the weather in Paris\? \[compaction-1\]<\/original-request>/,
      );
      assert.match(block.content, /13 earlier messages: 6 tool calls \(get_weather ×6\)/);
      assert.ok(block.encrypted_content && block.signature, 'opaque metadata and a signature to send back');
      assert.equal(rest[0]?.type, 'text', 'the model then answers from the compacted context');

      const [compaction, sampled] = reply.usage.iterations ?? [];
      assert.equal(compaction?.type, 'compaction');
      assert.equal(sampled?.type, 'message');
      assert.ok(compaction!.input_tokens > 60_000, 'the compaction read the whole prompt');
      // The top-level usage is the answer's alone: the compacted context, far smaller.
      assert.equal(reply.usage.input_tokens, sampled!.input_tokens);
      assert.ok(reply.usage.input_tokens < 2_000, `compacted context: ${reply.usage.input_tokens} tokens`);
      assert.deepEqual(reply.context_management, { applied_edits: [] });
    });
  });

  test('below the trigger nothing is compacted', async () => {
    await withMessagesApi(async (_server, client) => {
      const reply = await client.beta.messages.create(params(chain('Weather in Paris?', 1, 1_000), compact()));
      assert.ok(reply.content.every((block) => block.type !== 'compaction'));
      assert.equal(reply.usage.iterations ?? undefined, undefined);
    });
  });

  test('streamed, the SDK assembles the block from compaction_delta, opaque metadata and signature included', async () => {
    await withMessagesApi(async (_server, client) => {
      const stream = client.beta.messages.stream(params(chain('Weather in Paris? [stream]', 6, 40_000), compact()));
      const summaries: string[] = [];
      stream.on('compaction', (content) => summaries.push(content));
      const reply = await stream.finalMessage();
      const block = reply.content[0];
      assert.ok(block?.type === 'compaction');
      assert.deepEqual(summaries, [block.content]);
      assert.ok(block.encrypted_content && block.signature);
      assert.equal(reply.usage.iterations?.length, 2);
      assert.deepEqual(reply.context_management, { applied_edits: [] });
    });
  });

  test('sent back, the block stands for everything before it: those messages are not read again', async () => {
    await withMessagesApi(async (server, client) => {
      const question = 'What is the weather in Paris? [compaction-2]';
      const history = chain(question, 6, 40_000);
      const first = await client.beta.messages.create(params(history, compact()));
      const reply: BetaMessageParam = { role: 'assistant', content: first.content as BetaMessageContentParam };
      const next: BetaMessageParam = { role: 'user', content: 'And what did you find?' };

      // The whole history, or only the compacted reply onwards: the same prompt for the model.
      const whole = await client.beta.messages.create(params([...history, reply, next], compact()));
      const compacted = await client.beta.messages.create(params([reply, next], compact()));
      assert.equal(whole.usage.input_tokens, compacted.usage.input_tokens);
      assert.ok(whole.usage.input_tokens < 2_000, 'no compaction again: the prompt is small now');
      assert.ok(whole.content.every((block) => block.type !== 'compaction'));
      // The conversation is still the one that started with the question (scripts keep matching it).
      assert.equal(server.requestsFor('[compaction-2]').length, 3);
    });
  });

  test('with pause_after_compaction the reply is the block alone, stop_reason "compaction"', async () => {
    await withMessagesApi(async (server, client) => {
      const tag = '[paused]';
      server.script(tag, [{ reply: { content: [{ type: 'text', text: 'Scripted.' }], stop_reason: 'end_turn' } }]);
      const config: BetaContextManagementConfig = {
        edits: [
          { type: 'compact_20260112', trigger: { type: 'input_tokens', value: 50_000 }, pause_after_compaction: true },
        ],
      };
      const history = chain(`Weather? ${tag}`, 6, 40_000);
      const paused = await client.beta.messages.create(params(history, config));
      assert.equal(paused.stop_reason, 'compaction');
      assert.deepEqual(
        paused.content.map((block) => block.type),
        ['compaction'],
      );
      // Sent back as it is, the model carries on: the scripted step was not spent on the pause.
      const resumed = await client.beta.messages.create(
        params([...history, { role: 'assistant', content: paused.content as BetaMessageContentParam }], config),
      );
      assert.deepEqual(resumed.content, [{ type: 'text', text: 'Scripted.', citations: null }]);
    });
  });

  test('a compaction block out of place, ambiguous or tampered with is refused with the typed 400', async () => {
    await withMessagesApi(async (_server, client) => {
      const first = await client.beta.messages.create(params(chain('Weather? [typed]', 6, 40_000), compact()));
      const block = first.content[0] as Extract<BetaMessage['content'][number], { type: 'compaction' }>;
      const after = (content: BetaMessageContentParam): BetaMessageParam[] => [
        { role: 'assistant', content },
        { role: 'user', content: 'Go on.' },
      ];

      let error = await badRequest(
        client.beta.messages.create(
          params([
            { role: 'user', content: [block] },
            { role: 'assistant', content: 'x' },
            { role: 'user', content: 'y' },
          ]),
        ),
      );
      assert.ok(error instanceof Anthropic.CompactionBlockMisplacedError);
      error = await badRequest(
        client.beta.messages.create(
          params([
            { role: 'user', content: 'Hi' },
            { role: 'assistant', content: [{ type: 'text', text: 'Hm.' }, block] },
            { role: 'user', content: 'Go on.' },
          ]),
        ),
      );
      assert.equal(error.errorCode, 'compaction_block_misplaced');

      error = await badRequest(
        client.beta.messages.create(
          params([{ role: 'assistant', content: [block] }, { role: 'user', content: 'More.' }, ...after([block])]),
        ),
      );
      assert.ok(error instanceof Anthropic.CompactionBlockAmbiguousError);

      error = await badRequest(
        client.beta.messages.create(params(after([{ ...block, content: `${block.content} (edited)` }]))),
      );
      assert.ok(error instanceof Anthropic.CompactionContentMismatchError);
      error = await badRequest(client.beta.messages.create(params(after([{ ...block, encrypted_content: 'forged' }]))));
      assert.ok(error instanceof Anthropic.CompactionSignatureInvalidError);

      error = await badRequest(client.beta.messages.create(params(after([{ ...block, content: '' }]))));
      assert.match(error.message, /compaction\.content: String should have at least 1 character/);
      error = await badRequest(client.beta.messages.create(params(after([block]), undefined, [])));
      assert.match(error.message, /compaction blocks require the beta header 'anthropic-beta: compact-2026-01-12'/);

      // A failed compaction (null content) is a no-op, and a conversation may start from the block.
      const noop = await client.beta.messages.create(
        params([
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: [{ type: 'compaction', content: null }] },
          { role: 'user', content: 'Hello?' },
        ]),
      );
      assert.equal(noop.content[0]?.type, 'text');
      const resumed = await client.beta.messages.create(params(after([block])));
      assert.equal(resumed.content[0]?.type, 'text');
    });
  });
});

describe('local Messages API: context editing (clear_tool_uses_20250919)', () => {
  const clear = (edit: Record<string, unknown> = {}): BetaContextManagementConfig => ({
    edits: [{ type: 'clear_tool_uses_20250919', ...edit }],
  });

  test('past the trigger the oldest tool results are cleared, the last three kept, and the reply says so', async () => {
    await withMessagesApi(async (_server, client) => {
      const messages = chain('What is the weather in Paris? [clear-1]', 8, 60_000); // ~120,000 tokens
      const counted = await client.beta.messages.countTokens({
        model: DEMO_MODEL,
        tools: DEMO_TOOLS,
        messages,
        betas: BETAS,
        context_management: clear(),
      });
      const reply = await client.beta.messages.create(params(messages, clear()));
      const [edit] = reply.context_management?.applied_edits ?? [];
      assert.ok(edit?.type === 'clear_tool_uses_20250919');
      assert.equal(edit.cleared_tool_uses, 5);
      assert.ok(edit.cleared_input_tokens > 70_000);
      assert.equal(reply.usage.input_tokens, counted.input_tokens);
      assert.equal(counted.context_management?.original_input_tokens, counted.input_tokens + edit.cleared_input_tokens);
      // The model still read the latest result: it answers with the weather it found.
      assert.match(JSON.stringify(reply.content), /The weather in Paris/);
    });
  });

  test('below the trigger, with too little to clear, or for excluded tools, nothing is cleared', async () => {
    await withMessagesApi(async (_server, client) => {
      const messages = chain('Weather in Paris? [clear-2]', 8, 60_000);
      const small = await client.beta.messages.create(params(chain('Weather? [clear-3]', 2, 1_000), clear()));
      assert.deepEqual(small.context_management, { applied_edits: [] });
      const atLeast = await client.beta.messages.create(
        params(messages, clear({ clear_at_least: { type: 'input_tokens', value: 500_000 } })),
      );
      assert.deepEqual(atLeast.context_management, { applied_edits: [] });
      const excluded = await client.beta.messages.create(params(messages, clear({ exclude_tools: ['get_weather'] })));
      assert.deepEqual(excluded.context_management, { applied_edits: [] });
    });
  });

  test('a trigger in tool uses, keep, and clearing the inputs too', async () => {
    await withMessagesApi(async (server, client) => {
      const messages = chain('Weather in Paris? [clear-4]', 4, 400);
      const reply = await client.beta.messages.create(
        params(
          messages,
          clear({
            trigger: { type: 'tool_uses', value: 3 },
            keep: { type: 'tool_uses', value: 1 },
            clear_tool_inputs: true,
          }),
        ),
      );
      const edit = reply.context_management?.applied_edits[0];
      assert.ok(edit?.type === 'clear_tool_uses_20250919');
      assert.equal(edit.cleared_tool_uses, 3);
      // What the client sent is recorded as sent: clearing happens on the server's side only.
      const sent = server.requestsFor('[clear-4]')[0]!.body.messages;
      assert.ok(JSON.stringify(sent).includes('x'.repeat(400)));
      assert.ok(!JSON.stringify(sent).includes(CLEARED_TOOL_RESULT));
    });
  });
});

describe('local Messages API: context window and malformed context_management', () => {
  test('a prompt longer than the context window is refused, and classified as context_window_exceeded', async () => {
    await withMessagesApi(
      async (server, client) => {
        const messages = chain('Weather? [window]', 3, 40_000); // ~30,000 tokens
        const error = await badRequest(client.beta.messages.create(params(messages)));
        assert.match(error.message, /prompt is too long: \d+ tokens > 20000 maximum/);
        assert.equal(classifyModelError(error).type, ModelFailureType.ContextWindowExceeded);
        server.setContextWindow(100_000);
        assert.equal((await client.beta.messages.create(params(messages))).type, 'message');
      },
      { contextWindowTokens: 20_000 },
    );
  });

  test('each malformed context_management is a 400 that says what is wrong', async () => {
    await withMessagesApi(async (_server, client) => {
      const messages = chain('Weather?', 1, 100);
      const cases: Array<[config: unknown, betas: string[], message: RegExp]> = [
        [
          { edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 1_000 } }] },
          BETAS,
          /context_management\.edits\.0\.compact_20260112\.trigger\.value: Input should be greater than or equal to 50000/,
        ],
        [
          { edits: [{ type: 'compact_20260112', trigger: { type: 'tool_uses', value: 60_000 } }] },
          BETAS,
          /compact_20260112\.trigger\.type: Input should be 'input_tokens'/,
        ],
        [{ edits: [{ type: 'summarise_everything' }] }, BETAS, /Input tag 'summarise_everything' found using 'type'/],
        [
          { edits: [{ type: 'compact_20260112', when: 'soon' }] },
          BETAS,
          /compact_20260112\.when: Extra inputs are not permitted/,
        ],
        [
          { edits: [{ type: 'compact_20260112' }] },
          ['context-management-2025-06-27'],
          /requires the beta header 'anthropic-beta: compact-2026-01-12'/,
        ],
        [
          { edits: [{ type: 'clear_tool_uses_20250919' }] },
          ['compact-2026-01-12'],
          /requires the beta header 'anthropic-beta: context-management-2025-06-27'/,
        ],
        [
          { edits: [{ type: 'clear_tool_uses_20250919', keep: { type: 'tool_uses', value: -1 } }] },
          BETAS,
          /clear_tool_uses_20250919\.keep\.value: Input should be greater than or equal to 0/,
        ],
        [
          { edits: [{ type: 'compact_20260112' }, { type: 'compact_20260112' }] },
          BETAS,
          /compact_20260112 appears more than once/,
        ],
        [{ edits: 'compact' }, BETAS, /context_management\.edits: Input should be a valid list/],
      ];
      for (const [config, betas, message] of cases) {
        const error = await badRequest(
          client.beta.messages.create(params(messages, config as BetaContextManagementConfig, betas)),
        );
        assert.equal(error.type, 'invalid_request_error');
        assert.match(error.message, message);
      }
    });
  });
});
