// `npm run demo:agents`, as a person runs it (against the test run's dev server, without an API key): a coordinator
// hands General Motors and Ford to two sub-agents at once, Ford's buy_stock is approved through the parent, the answers
// are combined, and the tree of conversations and calls is printed with each one's cost, the total and Web UI links.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runScript } from '../support/run-script';

for (const protocol of ['native', 'legacy-xml'] as const) {
  test(`npm run demo:agents${protocol === 'native' ? '' : ' -- --protocol legacy-xml'} runs two sub-agents in parallel, approves one through the parent, and prints the tree`, async () => {
    const output = await runScript(
      'scripts/demo-agents.ts',
      '--exit',
      ...(protocol === 'native' ? [] : ['--protocol', protocol]),
    );
    const lines = output.split('\n');
    const at = (prefix: string) => lines.findIndex((line) => line.startsWith(prefix));
    const id = /Conversation (demo-agents-[0-9a-f]+)/.exec(output)?.[1];
    assert.ok(id, output);

    // One reply with two calls of the agent tool: one task per company (the legacy protocol's as <invoke>s in its text).
    if (protocol === 'native') {
      const gmCall = at('  → tool   research_company(task="What is the current stock price of General Motors?")');
      const fordCall = at('  → tool   research_company(task="Buy 10 shares of Ford.")');
      assert.ok(gmCall > 0 && fordCall === gmCall + 1, output);
    } else {
      assert.match(
        output,
        /<function_calls>\n<invoke>\n<tool_name>research_company<\/tool_name>\n<parameters>\n<task>What is the current stock price of General Motors\?<\/task>\n<\/parameters>\n<\/invoke>\n<invoke>\n<tool_name>research_company<\/tool_name>\n<parameters>\n<task>Buy 10 shares of Ford\.<\/task>/,
      );
    }

    // Ford's sub-agent asks to buy; the demo approves it on the parent, naming the child.
    const approval = lines.find((line) => line.startsWith('approval   sub-agent '));
    assert.ok(approval, output);
    assert.match(approval, new RegExp(`sub-agent ${id}/agent-\\S+ asks to run buy_stock\\(symbol="F", quantity=10\\)`));
    assert.ok(approval.includes(`approves it itself, via approveToolCall on the parent ${id}`), approval);

    // The coordinator combines both answers.
    assert.match(
      output,
      /\nAnswer: The sub-agents found: The current stock price of General Motors \(GM\) is \$38\.50\. buy_stock returned: Order \S+ filled: 10 F at 11\.89 = 118\.90\.\n/,
    );

    // The tree: the parent, then each child with its tool calls and its Web UI link.
    const tree = output.slice(output.indexOf('Tree of conversations and calls:'));
    const treeLines = tree.split('\n');
    assert.ok(treeLines[1]?.startsWith(`${id}  (coordinator: 2 model calls, $`), tree);
    const ui = `${process.env.TEMPORAL_UI_URL}/namespaces/`;
    assert.ok(treeLines[2]?.includes(`Web UI: ${ui}`) && treeLines[2].endsWith(`/workflows/${id}`), tree);
    const children = treeLines.filter((line) => /^[├└]─ research_company → /.test(line));
    assert.equal(children.length, 2, tree);
    for (const child of children) {
      const childId = /→ (\S+)/.exec(child)![1]!;
      assert.ok(childId.startsWith(`${id}/agent-`), child);
      assert.match(child, /\(sub-agent, completed: \d+ model calls, \$\d+\.\d{4}\)/);
      assert.ok(tree.includes(`/workflows/${encodeURIComponent(childId)}`), tree);
    }
    assert.match(tree, /task: What is the current stock price of General Motors\?/);
    assert.match(tree, /[├└]─ get_ticker_symbol\(company_name="General Motors"\) → GM\n/);
    assert.match(tree, /[├└]─ get_current_stock_price\(symbol="GM"\) → 38\.50\n/);
    assert.match(tree, /task: Buy 10 shares of Ford\./);
    assert.match(
      tree,
      /└─ buy_stock\(symbol="F", quantity=10\) → Order \S+ filled: 10 F at 11\.89 = 118\.90 {2}\(approved through the parent\)/,
    );

    // They ran in parallel: each one's run, and all of them running at once for a while.
    assert.equal(tree.match(/ {3}ran: \d+\.\d{2} s → \d+\.\d{2} s after the coordinator's start\n/g)?.length, 2, tree);
    assert.match(tree, /\nThe 2 sub-agents ran at once: all of them were running for \d+\.\d{2} s\.\n/);

    // The costs add up: the coordinator's own plus each sub-agent's is the coordinator's conversation cost.
    const cost =
      /\nCost: coordinator \$(\d+\.\d{4}) \+ sub-agents \$(\d+\.\d{4}) \+ \$(\d+\.\d{4}) = \$(\d+\.\d{4}); the coordinator's conversation cost \(its sub-agents' included\): \$(\d+\.\d{4})\n/.exec(
        output,
      );
    assert.ok(cost, output);
    const [own, first, second, sum, total] = cost.slice(1).map(Number) as [number, number, number, number, number];
    assert.ok(own > 0 && first > 0 && second > 0, cost[0]);
    assert.ok(Math.abs(own + first + second - sum) <= 0.00015, cost[0]);
    assert.equal(sum, total, cost[0]);
  });
}
