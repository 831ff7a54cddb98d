// `npm run demo:mcp`, as a person runs it (against the test run's dev server): one conversation whose tools come from
// the filesystem MCP server, printed step by step, ending with the answer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runScript } from '../support/run-script';

test('npm run demo:mcp lists the notes folder, reads the todo list and answers', async () => {
  const output = await runScript('scripts/demo-mcp.ts', '--exit');
  const lines = output.split('\n');
  const at = (prefix: string) => lines.findIndex((line) => line.startsWith(prefix));
  assert.ok(at('  → tool   filesystem__list_directory(path=') > 0, output);
  assert.ok(at('  ← result [FILE] ideas.md') > at('  → tool   filesystem__list_directory'), output);
  assert.ok(at('  → tool   filesystem__read_text_file(path=') > at('  ← result [FILE] ideas.md'), output);
  assert.ok(at('  ← result - buy milk') > at('  → tool   filesystem__read_text_file'), output);
  assert.match(
    output,
    /\nAnswer: Your notes folder holds ideas\.md and todo\.txt\. Still to do: buy milk, and call the bank\.\n/,
  );
  assert.match(output, /\(3 model calls, 2 MCP tool calls, /);
});
