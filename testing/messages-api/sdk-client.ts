// Test helpers: a fresh server per test, and a real SDK client pointed at it (no retries: callers own retries).
import Anthropic from '@anthropic-ai/sdk';
import { startMessagesApi } from './server';
import type { MessagesApi, MessagesApiOptions } from './types';

export function clientFor(server: MessagesApi, options: ConstructorParameters<typeof Anthropic>[0] = {}): Anthropic {
  return new Anthropic({ apiKey: 'test-key', baseURL: server.url, maxRetries: 0, ...options });
}

/** Runs `fn` against a server on a free port, and closes it afterwards whatever happens. */
export async function withMessagesApi<T>(
  fn: (server: MessagesApi, client: Anthropic) => Promise<T>,
  options: MessagesApiOptions = {},
): Promise<T> {
  const server = await startMessagesApi(options);
  try {
    return await fn(server, clientFor(server));
  } finally {
    await server.close();
  }
}
