// Why an MCP tool call could not be made, as a typed ApplicationFailure: the server went away or did not answer
// (retried: the retry opens a new connection), or it refused the request (not retried: asking again gives the same
// answer). A result with `isError` is not a failure: the tool ran and said what went wrong, and that is data.
import { ApplicationFailure } from '@temporalio/common';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { McpFailureType } from '../../common/failure-types';
import { McpConnectError, McpUnknownServerError } from './mcp-client-pool';

export function toMcpFailure(err: unknown, server: string, tool: string): ApplicationFailure {
  const what = `${server} · ${tool}`;
  if (err instanceof McpUnknownServerError) {
    return ApplicationFailure.create({ type: McpFailureType.UnknownServer, message: err.message, nonRetryable: true });
  }
  if (err instanceof McpConnectError) {
    return ApplicationFailure.create({ type: McpFailureType.ServerUnavailable, message: err.message, cause: err });
  }
  if (err instanceof McpError) {
    if (err.code === ErrorCode.ConnectionClosed) {
      return ApplicationFailure.create({
        type: McpFailureType.ServerUnavailable,
        message: `The MCP server "${server}" closed the connection during ${what} (its process exited or it was stopped).`,
      });
    }
    if (err.code === ErrorCode.RequestTimeout) {
      return ApplicationFailure.create({ type: McpFailureType.Timeout, message: `${what}: ${err.message}` });
    }
    return ApplicationFailure.create({
      type: McpFailureType.ProtocolError,
      message: `${what}: ${err.message}`,
      nonRetryable: true,
      details: [{ code: err.code }],
    });
  }
  const reason = err instanceof Error ? err.message : String(err);
  return ApplicationFailure.create({
    type: McpFailureType.ServerUnavailable,
    message: `The MCP server "${server}" could not be reached during ${what}: ${reason}`,
  });
}
