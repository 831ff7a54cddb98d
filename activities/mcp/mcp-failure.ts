// Why an MCP tool call could not be made, as a typed ApplicationFailure: the server went away or did not answer
// (retried: the retry opens a new connection), or it refused the request (not retried: asking again gives the same
// answer). A result with `isError` is not a failure: the tool ran and said what went wrong, and that is data.
import { ApplicationFailure } from '@temporalio/common';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_MAX_RESULT_CHARS } from '../../common/bounded-text';
import { truncate } from '../../common/safe-text';
import { McpFailureType } from '../../common/failure-types';
import { McpConnectError, McpToolListTooLongError, McpUnknownServerError } from './mcp-client-pool';

/**
 * `max`: the most characters of a message. What the server said goes into the failure (encoded by the worker, which a
 * lone surrogate would stop) and into the transcript: it is cut and made well-formed.
 */
export function toMcpFailure(
  err: unknown,
  server: string,
  tool: string,
  max = DEFAULT_MAX_RESULT_CHARS,
): ApplicationFailure {
  const failure = classify(err, server, tool);
  return ApplicationFailure.create({
    ...(failure.type && { type: failure.type }),
    message: truncate(failure.message, max),
    nonRetryable: failure.nonRetryable === true,
    ...(failure.details && { details: failure.details }),
  });
}

function classify(err: unknown, server: string, tool: string): ApplicationFailure {
  const what = `${server} · ${tool}`;
  if (err instanceof McpUnknownServerError) {
    return ApplicationFailure.create({ type: McpFailureType.UnknownServer, message: err.message, nonRetryable: true });
  }
  if (err instanceof McpToolListTooLongError) {
    return ApplicationFailure.create({
      type: McpFailureType.ProtocolError,
      message: `${what}: ${err.message}`,
      nonRetryable: true,
    });
  }
  if (err instanceof McpConnectError) {
    return ApplicationFailure.create({ type: McpFailureType.ServerUnavailable, message: err.message });
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
