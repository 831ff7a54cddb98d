// The names the model calls MCP tools by, and the approval patterns of a server's configuration.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchesPattern } from '../../activities/mcp/matches-pattern';
import { mcpToolName } from '../../activities/mcp/mcp-tool-name';
import { TOOL_NAME } from '../../common/options';

test('server__tool, readable', () => {
  assert.equal(mcpToolName('filesystem', 'read_file', new Set()), 'filesystem__read_file');
  assert.equal(mcpToolName('everything', 'get-sum', new Set()), 'everything__get-sum');
});

test('characters the API does not allow become _', () => {
  const name = mcpToolName('docs', 'search.v2/pages', new Set());
  assert.equal(name, 'docs__search_v2_pages');
  assert.match(name, TOOL_NAME);
});

test('too long: cut to 64 with a digest of the original, so two long names stay apart', () => {
  const long = 'a'.repeat(80);
  const one = mcpToolName('server', `${long}_one`, new Set());
  const two = mcpToolName('server', `${long}_two`, new Set());
  assert.equal(one.length, 64);
  assert.match(one, TOOL_NAME);
  assert.notEqual(one, two);
  assert.equal(mcpToolName('server', `${long}_one`, new Set()), one, 'the same tool gets the same name every time');
});

test('a name already taken (a built-in tool, another server’s tool) is numbered', () => {
  const taken = new Set(['a__b_c', 'a__b_c_2']);
  assert.equal(mcpToolName('a', 'b.c', taken), 'a__b_c_3');
  const full = mcpToolName('x'.repeat(30), 'x'.repeat(32), new Set());
  assert.equal(full.length, 64);
  const numbered = mcpToolName('x'.repeat(30), 'x'.repeat(32), new Set([full]));
  assert.equal(numbered.length, 64);
  assert.ok(numbered.endsWith('_2'));
});

test('approval patterns: exact names and * wildcards, nothing else is special', () => {
  assert.equal(matchesPattern('write_file', ['write_file']), true);
  assert.equal(matchesPattern('edit_file', ['edit_*']), true);
  assert.equal(matchesPattern('read_file', ['edit_*', 'write_file']), false);
  assert.equal(matchesPattern('anything', ['*']), true);
  assert.equal(matchesPattern('a.b', ['a?b']), false);
  assert.equal(matchesPattern('aXb', ['a.b']), false, 'a dot is a dot');
  assert.equal(matchesPattern('write_file', []), false);
});
