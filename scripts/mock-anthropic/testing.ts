// Test helpers: a fresh server per test, and a real SDK client pointed at it (no retries: callers own retries).
import Anthropic from '@anthropic-ai/sdk';
import { startMockAnthropic } from './server';
import type { MockAnthropic, MockAnthropicOptions } from './types';

export function clientFor(server: MockAnthropic, options: ConstructorParameters<typeof Anthropic>[0] = {}): Anthropic {
  return new Anthropic({ apiKey: 'test-key', baseURL: server.url, maxRetries: 0, ...options });
}

/** Runs `fn` against a server on a free port, and closes it afterwards whatever happens. */
export async function withMockAnthropic<T>(
  fn: (server: MockAnthropic, client: Anthropic) => Promise<T>,
  options: MockAnthropicOptions = {},
): Promise<T> {
  const server = await startMockAnthropic(options);
  try {
    return await fn(server, clientFor(server));
  } finally {
    await server.close();
  }
}
