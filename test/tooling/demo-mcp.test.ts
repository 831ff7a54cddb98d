// `npm run demo:mcp`, as a person runs it (against the test run's dev server): one conversation whose tools come from
// the filesystem MCP server, printed step by step, ending with the answer.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';

const ROOT = path.resolve(__dirname, '..', '..');

test('npm run demo:mcp lists the notes folder, reads the todo list and answers', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo-mcp.ts', '--exit'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  assert.equal(code, 0, output);
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
