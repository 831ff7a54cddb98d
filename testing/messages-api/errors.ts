// Error bodies as the API sends them: `{type:'error', error:{type, message}, request_id}`, and the mapping between
// HTTP statuses and error types (https://platform.claude.com/docs/en/api/errors).

export interface ErrorBody {
  type: 'error';
  /** `details.error_code` names a cause the SDK has a typed error for (e.g. `compaction_block_misplaced`). */
  error: { type: string; message: string; details?: { error_code: string; unsupported?: string[] } };
  request_id: string;
}

const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  408: 'timeout_error',
  409: 'conflict_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

const STATUS_BY_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  conflict_error: 409,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** The messages the API (and the SDK's schema defaults) use when nothing more specific is said. */
const DEFAULT_MESSAGE: Record<string, string> = {
  invalid_request_error: 'Invalid request',
  authentication_error: 'invalid x-api-key',
  billing_error: 'Your credit balance is too low to access the Anthropic API.',
  permission_error: 'Your API key does not have permission to use the specified resource.',
  not_found_error: 'Not found',
  conflict_error: 'Conflict',
  request_too_large: 'Request exceeds the maximum allowed number of bytes.',
  rate_limit_error: 'Number of requests has exceeded your rate limit. Please try again later.',
  api_error: 'Internal server error',
  timeout_error: 'Request timeout',
  overloaded_error: 'Overloaded',
};

/** The error type the API uses for an HTTP status. */
export function errorTypeForStatus(status: number): string {
  return TYPE_BY_STATUS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

/** The HTTP status that carries an error type (used when a stream error has to be answered as JSON). */
export function statusForErrorType(type: string): number {
  return STATUS_BY_TYPE[type] ?? 500;
}

export function defaultErrorMessage(type: string): string {
  return DEFAULT_MESSAGE[type] ?? 'Error';
}

export function errorBody(
  type: string,
  message: string | undefined,
  requestId: string,
  code?: string,
  unsupported?: string[],
): ErrorBody {
  const details = code && { details: { error_code: code, ...(unsupported && { unsupported }) } };
  const error = { type, message: message ?? defaultErrorMessage(type), ...details };
  return { type: 'error', error, request_id: requestId };
}
