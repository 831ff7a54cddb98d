// Every failure type the orchestrator names, in one map: the workflow raises them, the activities classify into
// them, the client branches on them. Matched by `type`, never by class (classes do not survive serialisation).

export const FailureType = {
  /** An update's validator refused the call; nothing changed. The client reports it as `rejected`. */
  Rejected: 'Rejected',
  /**
   * An update's validator refused a message's own options: not valid, or not with the conversation's (a typed answer in
   * mode `tool` with thinking on, say); nothing changed. The client reports it as `invalid_options`.
   */
  InvalidMessageOptions: 'InvalidMessageOptions',
  /**
   * An update's validator refused the call for now: as many callers wait on the conversation's turns as it takes
   * (workflows/turn-waiters.ts); nothing changed. The client reports it as `busy`.
   */
  Busy: 'ConversationBusy',
  /** A fork point the conversation has no such point for (common/fork.ts): the fork-point query answers so. */
  InvalidForkPoint: 'InvalidForkPoint',
  /** The workflow's own input (options, carried state) is not valid: the conversation fails at once. */
  InvalidConversationInput: 'InvalidConversationInput',
  /** The conversation names tools the workers do not register. */
  UnknownTools: 'UnknownTools',
  /** The conversation names MCP servers the workers are not configured with, or tools those servers lack. */
  UnknownMcpTools: 'UnknownMcpTools',
  /** The tools of the conversation's MCP servers could not be listed (a server would not start or answer). */
  McpToolsUnavailable: 'McpToolsUnavailable',
  /** The conversation ended before it answered this turn. */
  ConversationEnded: 'ConversationEnded',
  /** A model call failed in a way the classifier did not name (e.g. its retries ran out on a timeout). */
  ModelCallFailed: 'ModelCallFailed',
  /**
   * A retry of a model call was not sent: with what its failed attempts billed it would pass the budget. The turn ends
   * with `budget_exhausted` (details: `{scope, billed}`).
   */
  BudgetExhausted: 'BudgetExhausted',
} as const;

/** What the model-failure classifier (activities/model-failure.ts) calls a failed Messages API call. */
export const ModelFailureType = {
  InvalidRequest: 'ModelInvalidRequest',
  /** A 400 saying the prompt is longer than the model's context window. */
  ContextWindowExceeded: 'ModelContextWindowExceeded',
  Authentication: 'ModelAuthentication',
  Billing: 'ModelBilling',
  PermissionDenied: 'ModelPermissionDenied',
  NotFound: 'ModelNotFound',
  RequestTimeout: 'ModelRequestTimeout',
  Conflict: 'ModelConflict',
  RequestTooLarge: 'ModelRequestTooLarge',
  RateLimited: 'ModelRateLimited',
  /**
   * Not a failure of the call: the fleet's rate limiter (docs/rate-limits.md) said to wait longer than an attempt
   * should hold its worker slot; the attempt ends and Temporal starts the next one after the wait (nextRetryDelay).
   */
  WaitingForRateLimit: 'ModelWaitingForRateLimit',
  Overloaded: 'ModelOverloaded',
  ServerError: 'ModelServerError',
  StreamError: 'ModelStreamError',
  Timeout: 'ModelTimeout',
  ConnectionError: 'ModelConnectionError',
  /**
   * The request could not be built (before any HTTP call): the same input fails the same way on every attempt, so
   * it is not retried.
   */
  RequestInvalid: 'ModelRequestInvalid',
  /** Not from the API at all: a bug or an unexpected reply shape. */
  CallError: 'ModelCallError',
  /**
   * The reply is larger than a model call's result may be (activities/reply-size-limit.ts): billed (details:
   * `{billed, bytes, limit}`), dropped, not retried; the turn fails and the conversation goes on.
   */
  ReplyTooLarge: 'ModelReplyTooLarge',
} as const;

/** How an MCP tool call that could not be made fails (activities/mcp/mcp-failure.ts); the model reads `type: message`. */
export const McpFailureType = {
  /** The server could not be started or reached, or its connection closed mid-call: retried. */
  ServerUnavailable: 'McpServerUnavailable',
  /** The server did not answer within the call's timeout: retried. */
  Timeout: 'McpTimeout',
  /** The server answered with a JSON-RPC error (invalid params, unknown method, …): not retried. */
  ProtocolError: 'McpProtocolError',
  /** The worker is not configured with the server: not retried. */
  UnknownServer: 'McpUnknownServer',
} as const;
