// Waiting in a test for something another process or the server does in its own time (a request arrives, a list
// shows a conversation, an approval is asked for): polled, bounded, and named when it never comes.
import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitOptions {
  /** How long to wait before failing (default 90 s: a loaded machine is slow, a test's own timeout bounds it too). */
  timeoutMs?: number;
  /** How often to ask (default 100 ms). */
  everyMs?: number;
}

/**
 * Polls `check` until it gives something other than undefined or false, and returns that. A check that throws has not
 * come true yet (the server may not know the workflow yet); its last error is named if time runs out.
 */
export async function waitUntil<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 90_000, everyMs = 100 }: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `Timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`,
      );
    await sleep(everyMs);
  }
}
