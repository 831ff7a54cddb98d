// How an MCP call that could not be made fails, by the SDK's own errors: retried when the server went away or was
// slow, not retried when it refused the request.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { McpConnectError, McpUnknownServerError } from '../../activities/mcp/mcp-client-pool';
import { toMcpFailure } from '../../activities/mcp/mcp-failure';

const classify = (err: unknown) => {
  const failure = toMcpFailure(err, 'files', 'read_file');
  return [failure.type, failure.nonRetryable, failure.message];
};

test('mcp-failure: the connection closed mid-call → McpServerUnavailable, retried', () => {
  assert.deepEqual(classify(new McpError(ErrorCode.ConnectionClosed, 'Connection closed')), [
    'McpServerUnavailable',
    false,
    'The MCP server "files" closed the connection during files · read_file (its process exited or it was stopped).',
  ]);
});

test('mcp-failure: a server that would not start, or an HTTP error → McpServerUnavailable, retried', () => {
  assert.deepEqual(classify(new McpConnectError('Could not start or reach the MCP server "files": spawn x ENOENT')), [
    'McpServerUnavailable',
    false,
    'Could not start or reach the MCP server "files": spawn x ENOENT',
  ]);
  assert.deepEqual(classify(new TypeError('fetch failed')), [
    'McpServerUnavailable',
    false,
    'The MCP server "files" could not be reached during files · read_file: fetch failed',
  ]);
});

test('mcp-failure: a request timeout → McpTimeout, retried', () => {
  assert.deepEqual(classify(new McpError(ErrorCode.RequestTimeout, 'Request timed out')), [
    'McpTimeout',
    false,
    'files · read_file: MCP error -32001: Request timed out',
  ]);
});

test('mcp-failure: a JSON-RPC error from the server (invalid params, unknown method) → McpProtocolError, not retried', () => {
  assert.deepEqual(classify(new McpError(ErrorCode.InvalidParams, 'Unknown tool: read_file')), [
    'McpProtocolError',
    true,
    'files · read_file: MCP error -32602: Unknown tool: read_file',
  ]);
  assert.deepEqual(classify(new McpError(ErrorCode.MethodNotFound, 'Method not found'))[1], true);
});

test('mcp-failure: a server the worker does not have → McpUnknownServer, not retried', () => {
  assert.deepEqual(classify(new McpUnknownServerError('This worker has no MCP server "files".')), [
    'McpUnknownServer',
    true,
    'This worker has no MCP server "files".',
  ]);
});
