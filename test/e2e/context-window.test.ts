// Conversations that outlive the model's context window, on the real dev server and a local Messages API with a
// small window: a chain of tool calls whose outputs fill it ends with context_window_exceeded when nothing manages
// the context, and completes with the API's compaction, with context editing, or with the orchestrator's own
// summaries — while the transcript the model sees, the state a run hands to the next and what the worker sends all
// shrink with it, and the full record stays readable in the history.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { ConversationInput } from '../../common/conversation-input';
import { ConversationContextTokens, ConversationContextTokensBefore } from '../../common/search-attributes';
import { SUMMARY_HEADING } from '../../common/orchestrator-summary';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import type { RecordedRequest } from '../../testing/messages-api/types';
import { chainSteps, CHAIN_TOOLS } from '../../scripts/bench/chain-script';
import { activitiesOf, type Harness, startHarness, uniquePrompt } from '../support/harness';

const STEPS = 14;
/** About 5,000 tokens per tool output: a window of 60,000 holds eleven of them. */
const OUTPUT_CHARS = 20_000;
const WINDOW = 60_000;
const chainOptions = {
  tools: CHAIN_TOOLS,
  limits: { maxModelCallsPerTurn: 100, maxToolCallsPerTurn: 100 },
};

const firstBlockType = (message: MessageParam | undefined) =>
  Array.isArray(message?.content) ? (message.content[0] as { type: string } | undefined)?.type : undefined;
const opensWithCompaction = (request: RecordedRequest) => firstBlockType(request.body.messages[0]) === 'compaction';

describe('a chain of tool calls longer than the context window (native protocol)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ contextWindowTokens: WINDOW, toolOutputChars: OUTPUT_CHARS });
  });
  after(async () => {
    await h?.close();
  });

  /** A conversation running the scripted chain; resolves with its id and first turn's reply. */
  async function runChain(label: string, options: Record<string, unknown>) {
    const prompt = uniquePrompt(`Check the weather and some ticker symbols, one lookup at a time (${label}).`);
    h.mock.script(prompt, chainSteps(STEPS));
    const id = `context-${label}-${prompt.slice(-9, -1)}`;
    const reply = await h.conversations.sendMessage(id, prompt, { start: { ...chainOptions, ...options } });
    return { id, prompt, reply, requests: h.mock.requestsFor(prompt) };
  }

  test('with nothing managing the context, it ends with context_window_exceeded', async () => {
    const { reply, requests } = await runChain('off', {});
    assert.equal(reply.status, 'context_window_exceeded');
    assert.match(reply.text, /prompt is too long: \d+ tokens > 60000 maximum/);
    assert.ok(requests.length < STEPS, `stopped after ${requests.length} model calls`);
  });

  test("with the API's compaction it completes; from the compaction on, only the compacted context is kept and sent", async () => {
    const { id, reply, requests } = await runChain('compaction', {
      contextManagement: { mode: 'compaction', compaction: { triggerTokens: 50_000 } },
    });
    assert.equal(reply.status, 'awaiting_user');
    assert.equal(reply.text, `Done after ${STEPS} lookups.`);
    assert.equal(reply.toolCalls, STEPS);

    // Every request asked for compaction; the ones after it start at the compacted reply and are small.
    for (const request of requests) {
      assert.match(request.headers['anthropic-beta'] ?? '', /compact-2026-01-12/);
      assert.deepEqual(request.body.context_management, {
        edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 50_000 } }],
      });
    }
    const firstCompacted = requests.findIndex(opensWithCompaction);
    assert.ok(firstCompacted > 0, 'a request after the compaction sends the compacted context');
    assert.ok(requests.slice(firstCompacted).every(opensWithCompaction));
    assert.ok(
      requests[firstCompacted]!.body.messages.length < requests[firstCompacted - 1]!.body.messages.length / 4,
      'far fewer messages than before',
    );

    const state = await h.conversations.getState(id);
    assert.equal(state.context.compactions, 1);
    assert.equal(state.context.lastCompaction?.by, 'api');
    assert.match(state.context.lastCompaction?.summary ?? '', /<original-request>Check the weather/);
    assert.ok(state.context.peakInputTokens >= 50_000, `peak ${state.context.peakInputTokens}`);
    assert.ok(state.context.inputTokens < state.context.peakInputTokens / 2, `now ${state.context.inputTokens}`);
    const transcript = await h.conversations.getTranscript(id);
    assert.equal(firstBlockType(transcript[0]), 'compaction');
    assert.equal(transcript.length, requests.at(-1)!.body.messages.length + 1, 'the last request, and its reply');
    const description = await h.conversations.handle(id).describe();
    assert.equal(description.typedSearchAttributes.get(ConversationContextTokens), state.context.inputTokens);
    assert.equal(
      description.typedSearchAttributes.get(ConversationContextTokensBefore),
      state.context.inputTokensBefore,
    );

    // The full record stays in the history: every tool's whole output, and the compacting call's summary first.
    const activities = await activitiesOf(h.client, id);
    const tools = activities.filter((a) => a.type !== 'callModel');
    assert.equal(tools.length, STEPS);
    assert.ok(tools.every((a) => (a.result as { content: string }).content.length === OUTPUT_CHARS));
    const compacting = activities.filter(
      (a) =>
        a.type === 'callModel' && (a.result as { content: Array<{ type: string }> }).content[0]?.type === 'compaction',
    );
    assert.equal(compacting.length, 1);
    // The calls after it say so in their summary, as the Web UI lists them.
    const calls = activities.filter((a) => a.type === 'callModel');
    const after = calls.slice(calls.indexOf(compacting[0]!) + 1);
    assert.ok(after.length > 0 && after.every((a) => /· context compacted ×1$/.test(a.summary ?? '')));
  });

  test('continue-as-new right after a compaction: the next run is handed the compacted transcript, and sends it', async () => {
    const { id, reply, requests } = await runChain('can', {
      contextManagement: { mode: 'compaction', compaction: { triggerTokens: 50_000 } },
      continueAsNewAfterModelCalls: 1,
    });
    assert.equal(reply.text, `Done after ${STEPS} lookups.`);
    const compactedAt = requests.findIndex(opensWithCompaction);
    // Run n + 1 made call n + 1: the run that follows the compacting call starts from the compacted transcript.
    const runs = await runsOf(h, id);
    assert.ok(runs.length > STEPS, `${runs.length} runs`);
    const carried = runs[compactedAt]!.carried!;
    assert.equal(firstBlockType(carried.transcript[0]), 'compaction');
    assert.equal(carried.transcript.length, 2, 'the compacted reply and its tool results, nothing older');
    assert.equal(carried.context?.compactions, 1);
    assert.deepEqual(withoutBreakpoints(requests[compactedAt]!.body.messages), carried.transcript);
  });

  test('context editing alone keeps it inside the window: the API clears old tool results, the transcript stays whole', async () => {
    const { id, reply, requests } = await runChain('clear', {
      contextManagement: { mode: 'clear-tool-uses', clearToolUses: { triggerTokens: 30_000, keepToolUses: 2 } },
    });
    assert.equal(reply.text, `Done after ${STEPS} lookups.`);
    assert.match(requests[0]!.headers['anthropic-beta'] ?? '', /context-management-2025-06-27/);
    assert.equal(requests.at(-1)!.body.messages.length, 2 * STEPS + 1, 'the client keeps sending the whole history');
    const state = await h.conversations.getState(id);
    assert.ok(
      state.context.clearedToolUses > STEPS,
      `${state.context.clearedToolUses} tool results cleared over the calls`,
    );
    assert.equal(state.context.compactions, 0);
    assert.ok(state.context.inputTokensBefore > state.context.inputTokens, 'the last call read less than it was sent');
    assert.ok(state.context.peakInputTokens > WINDOW, 'more than the window was sent, less was read');
  });

  test("without the API's compaction, the orchestrator summarises older messages itself, keeping tool calls with their results", async () => {
    const { id, reply, requests } = await runChain('summary', {
      contextManagement: { mode: 'compaction', compaction: { by: 'orchestrator', triggerTokens: 30_000 } },
    });
    assert.equal(reply.text, `Done after ${STEPS} lookups.`);
    assert.equal(reply.toolCalls, STEPS);
    for (const request of requests) {
      assert.equal(request.body.context_management, undefined, 'nothing asked of the API');
      assert.equal(request.headers['anthropic-beta'], undefined);
    }
    const summaryRequests = requests.filter((r) =>
      JSON.stringify(r.body.messages.at(-1)).includes('Summarise the conversation above'),
    );
    assert.ok(summaryRequests.length >= 2, `${summaryRequests.length} summaries`);
    assert.ok(summaryRequests.every((r) => r.body.tool_choice?.type === 'none'));
    const summarised = requests.filter(
      (r) => !summaryRequests.includes(r) && JSON.stringify(r.body.messages[0]).includes(SUMMARY_HEADING),
    );
    assert.ok(summarised.length > 0);
    for (const request of summarised) {
      assert.equal(request.body.messages[1].role, 'assistant');
      assert.equal(firstBlockType(request.body.messages[2]), 'tool_result', 'the kept call is followed by its results');
    }
    // Each summary is an activity of its own in the history, named for what it does, its summary as its result.
    const activities = await activitiesOf(h.client, id);
    const summaries = activities.filter((a) => a.type === 'summariseContext');
    assert.equal(summaries.length, summaryRequests.length);
    assert.match(summaries[0]!.summary ?? '', /^summarise context · messages 1–\d+ of \d+ · ~\d+ tokens$/);
    assert.match((summaries[0]!.result as { summary: string }).summary, /<original-request>Check the weather/);
    const state = await h.conversations.getState(id);
    assert.equal(state.context.compactions, summaries.length);
    assert.equal(state.context.lastCompaction?.by, 'orchestrator');
    assert.equal(state.modelCalls, STEPS + 1, 'the summaries are not counted as the turn’s model calls');
    assert.ok(state.usage.inputTokens > 0);
  });
});

describe('the legacy XML protocol, with outputs that fill the window in two tool calls', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ contextWindowTokens: 100_000, toolOutputChars: 110_000 });
  });
  after(async () => {
    await h?.close();
  });

  for (const by of ['api', 'orchestrator'] as const) {
    test(`compacted by the ${by === 'api' ? 'API' : 'orchestrator'}, the answer is right and the next question follows on`, async () => {
      const prompt = uniquePrompt(STOCK_QUESTION);
      const id = `context-legacy-${by}-${prompt.slice(-9, -1)}`;
      const options = {
        tools: STOCK_TOOLS,
        protocol: 'legacy-xml' as const,
        contextManagement: { mode: 'compaction' as const, compaction: { by, triggerTokens: 50_000 } },
      };
      const first = await h.conversations.sendMessage(id, prompt, { start: options });
      assert.match(first.text, /^The current stock price of General Motors is \$\d+\.\d\d\.$/);
      const state = await h.conversations.getState(id);
      assert.equal(state.context.compactions, 1);
      const transcript = await h.conversations.getTranscript(id);
      if (by === 'api') assert.equal(firstBlockType(transcript[0]), 'compaction');
      else assert.match(JSON.stringify(transcript[0]), new RegExp(SUMMARY_HEADING));
      assert.ok(transcript.length < 6, `${transcript.length} messages`);

      const second = await h.conversations.sendMessage(id, 'What is the current stock price of Apple?');
      assert.match(second.text, /Apple/);
      const last = h.mock.requestsFor(prompt).at(-1)!;
      assert.match(JSON.stringify(last.body.system), /<tool_description>/, 'the legacy tools prompt is still there');
      assert.ok(last.body.messages.length < 10);
    });
  }
});

/** Messages as the request sent them, without the prompt-cache breakpoint the worker adds to the last block. */
function withoutBreakpoints(messages: MessageParam[]): MessageParam[] {
  return JSON.parse(JSON.stringify(messages), (key, value) => (key === 'cache_control' ? undefined : value));
}

/** Every run of a conversation, oldest first, with the state it was handed. */
async function runsOf(h: Harness, id: string) {
  const runs: Array<{ runId: string; carried?: NonNullable<ConversationInput['carried']> }> = [];
  let runId: string | undefined;
  for (;;) {
    const handle = h.client.workflow.getHandle(id, runId);
    const history = await handle.fetchHistory();
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    const [input] = (started?.input?.payloads ?? []).map((p) =>
      h.client.options.loadedDataConverter.payloadConverter.fromPayload<ConversationInput>(p),
    );
    runs.unshift({ runId: (await handle.describe()).runId, ...(input?.carried && { carried: input.carried }) });
    runId = started?.continuedExecutionRunId ?? undefined;
    if (!runId) return runs;
  }
}
