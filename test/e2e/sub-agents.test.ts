// Sub-agents end to end (real dev server, real worker, the SDK against the local Messages API): an agent tool's call
// is a child conversation whose answer is the call's tool_result; several run at once; the parent's usage and cost
// include its children's; a child that fails, or may not start, is an error result the model reads.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { defineAgentTool } from '../../activities/agent-tool-definition';
import { ConversationParent } from '../../common/search-attributes';
import { demoTools } from '../../testing/demo-tools';
import { type Harness, lastUserBlocks, startHarness, uniquePrompt } from '../support/harness';
import { callsTools, says, answersJson } from '../support/script-steps';

const researcher = defineAgentTool({
  name: 'research_company',
  description: 'Researches one company: its ticker symbol and current stock price.',
  agent: {
    system: 'You research one company with your tools and answer in one sentence.',
    tools: ['get_ticker_symbol', 'get_current_stock_price'],
  },
});
const quoter = defineAgentTool({
  name: 'quote_company',
  description: 'Gives a typed quote for one company.',
  agent: {
    tools: ['get_ticker_symbol'],
    output: { schema: z.object({ symbol: z.string(), price: z.number() }) },
  },
});

let h: Harness;
before(async () => {
  h = await startHarness({ tools: [...demoTools, researcher, quoter] });
});
after(async () => {
  await h?.close();
});

/** The tool_result blocks the parent's `n`-th model request (from 0) sent back. */
function resultsSent(prompt: string, n: number) {
  return lastUserBlocks(h.mock.requestsFor(prompt)[n]!) as {
    tool_use_id: string;
    is_error?: boolean;
    content: unknown;
  }[];
}

describe('sub-agents', () => {
  test('two agent calls in one reply run as two child conversations at once; their answers are the results', async () => {
    const prompt = uniquePrompt('Compare General Motors and Ford');
    const gmTask = uniquePrompt('Research General Motors');
    const fordTask = uniquePrompt('Research Ford');
    h.mock.script(prompt, [
      callsTools(['research_company', { task: gmTask }], ['research_company', { task: fordTask }]),
      says('GM is at $38.50 and Ford at $12.10.'),
    ]);
    h.mock.script(gmTask, [
      callsTools(['get_ticker_symbol', { company_name: 'General Motors' }]),
      callsTools(['get_current_stock_price', { symbol: 'GM' }]),
      says('General Motors (GM) trades at $38.50.'),
    ]);
    h.mock.script(fordTask, [says('Ford (F) trades at $12.10.')]);
    const id = `sub-agents-two-${Date.now()}`;
    const result = await h.conversations.sendMessage(id, prompt, { start: { tools: ['research_company'] } });
    assert.equal(result.text, 'GM is at $38.50 and Ford at $12.10.');

    const results = resultsSent(prompt, 1);
    assert.equal(results.length, 2);
    assert.deepEqual(
      results.map((r) => [r.is_error ?? false, JSON.stringify(r.content)]),
      [
        [false, JSON.stringify('General Motors (GM) trades at $38.50.')],
        [false, JSON.stringify('Ford (F) trades at $12.10.')],
      ].map(([e, c]) => [e, c]),
    );
    // The children are listed under their parent.
    const children = [];
    for await (const child of h.client.workflow.list({ query: `ConversationParent = "${id}"` })) children.push(child);
    assert.equal(children.length, 2);
    for (const child of children) {
      assert.equal(child.typedSearchAttributes.get(ConversationParent), id);
      assert.ok(child.workflowId.startsWith(`${id}/agent-`));
    }
    // The parent's usage counts its own 2 calls and its children's 3 + 1.
    const state = await h.conversations.getState(id);
    assert.equal(state.modelCalls, 2);
    const byModel = Object.values(state.byModel ?? {});
    assert.equal(
      byModel.reduce((sum, part) => sum + part.calls, 0),
      6,
    );
  });

  test("a typed child's answer is its JSON; an unknown tool in a child is an error result", async () => {
    const prompt = uniquePrompt('Quote GM');
    const task = uniquePrompt('Quote General Motors');
    h.mock.script(prompt, [callsTools(['quote_company', { task }]), says('Done.')]);
    h.mock.script(task, [answersJson({ symbol: 'GM', price: 38.5 })]);
    const id = `sub-agents-typed-${Date.now()}`;
    await h.conversations.sendMessage(id, prompt, { start: { tools: ['quote_company'] } });
    const [result] = resultsSent(prompt, 1);
    assert.equal(result!.is_error ?? false, false);
    assert.deepEqual(JSON.parse(result!.content as string), { symbol: 'GM', price: 38.5 });
  });
});
