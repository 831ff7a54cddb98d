// Heartbeats while an activity works, so a worker that dies mid-call is noticed within the heartbeat timeout.
// A third of the timeout apart: often enough to never miss it, rare enough not to cost a server write per second.
import type { Context } from '@temporalio/activity';

/** `details` gives what each heartbeat carries (e.g. an MCP tool's latest progress), so none overwrites it. */
export function keepAlive(context: Context, details?: () => unknown): () => void {
  const timeoutMs = context.info.heartbeatTimeoutMs;
  if (!timeoutMs) return () => undefined;
  const timer = setInterval(() => context.heartbeat(details?.()), Math.max(500, timeoutMs / 3));
  return () => clearInterval(timer);
}
