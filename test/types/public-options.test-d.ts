// Type tests of the public client and gateway options: what a caller can get wrong is refused by the compiler, and a
// typed answer gives a typed result. Checked by `tsc --noEmit -p .` (tsconfig's include has test/; npm test runs it in
// test/tooling/static-checks.test.ts), never run: every call is inside a function nothing calls. Each
// `@ts-expect-error` must meet an error on its next line, or tsc fails ("Unused '@ts-expect-error' directive"): a
// loosened option type fails these tests.
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { ConversationClient, type StartOptions, type TurnResult } from '../../client';
import { createGatewayHandler, type GatewayToken } from '../../gateway';

/** true when A and B are the same type (not merely assignable either way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function expectTrue<T extends true>(): T | undefined {
  return undefined;
}

declare const client: ConversationClient;
declare const temporal: Client;
const quote = z.object({ symbol: z.string(), price: z.number() });

export async function typedSendMessage(): Promise<void> {
  const typed = await client.sendMessage('id', 'text', { output: { schema: quote } });
  expectTrue<Equal<typeof typed.output, { symbol: string; price: number }>>();
  // The answer's type is the schema's output: a transform's result, not its input.
  const _parsed = await client.sendMessage('id', 'text', {
    output: { schema: z.object({ n: z.string().transform(Number) }), mode: 'tool', toolName: 'answer' },
    timeoutMs: 60_000,
  });
  expectTrue<Equal<typeof _parsed.output, { n: number }>>();
  const _plain = await client.sendMessage('id', 'text', { timeoutMs: 60_000, updateId: 'u-1' });
  expectTrue<Equal<typeof _plain, TurnResult>>();
  // @ts-expect-error: the typed answer has only the schema's fields
  void typed.output.volume;
}

export async function wrongSendOptions(): Promise<void> {
  // @ts-expect-error: timeoutMs is a number of milliseconds
  await client.sendMessage('id', 'text', { timeoutMs: '5 minutes' });
  // @ts-expect-error: no option `timeout` (it is `timeoutMs`)
  await client.sendMessage('id', 'text', { timeout: 5_000 });
  // @ts-expect-error: a new conversation's options go in `start`, not at the top level
  await client.sendMessage('id', 'text', { model: 'claude-sonnet-5-5' });
  // @ts-expect-error: `start` has no id: the message's id is the conversation's
  await client.sendMessage('id', 'text', { start: { id: 'another' } });
  // @ts-expect-error: `start` takes a conversation's options, typed too
  await client.sendMessage('id', 'text', { start: { maxTokens: 'many' } });
  // @ts-expect-error: `output` is { schema, mode?, toolName? }, not the schema alone
  await client.sendMessage('id', 'text', { output: quote });
  // @ts-expect-error: `mode` is 'native' or 'tool'
  await client.sendMessage('id', 'text', { output: { schema: quote, mode: 'json' } });
  // @ts-expect-error: everything goes in one options object, nothing after it
  await client.sendMessage('id', 'text', {}, 60_000);
  // @ts-expect-error: submitMessage does not wait for the turn: no timeoutMs
  await client.submitMessage('id', 'text', { timeoutMs: 60_000 });
  // @ts-expect-error: streamMessage takes a signal, not an update id
  void client.streamMessage('id', 'text', { updateId: 'u-1' });
  // @ts-expect-error: a signal is an AbortSignal
  void client.streamMessage('id', 'text', { signal: 60_000 });
}

export async function startOptions(): Promise<void> {
  const start: StartOptions = { id: 'c-1', owner: 'alice', model: 'claude-sonnet-5-5', tools: ['get_ticker_symbol'] };
  await client.startConversation({ ...start, firstMessage: 'hello', output: { schema: quote } });
  // @ts-expect-error: maxTokens is a number
  await client.startConversation({ maxTokens: '1024' });
  // @ts-expect-error: no option `modle`
  await client.startConversation({ modle: 'claude-sonnet-5-5' });
  // @ts-expect-error: protocol is 'native' or 'legacy-xml'
  await client.startConversation({ protocol: 'xml' });
  // @ts-expect-error: an owner is a principal's name
  await client.startConversation({ owner: { name: 'alice' } });
  // @ts-expect-error: a wait is a number of milliseconds
  await client.awaitTurn('id', 1, { timeoutMs: '1h' });
}

export async function clientOptions(): Promise<void> {
  const tools = ['get_ticker_symbol'] as const;
  void new ConversationClient({ client: temporal, taskQueue: 'q', tools, turnTimeoutMs: 60_000 });
  // @ts-expect-error: taskQueue is required
  void new ConversationClient({ client: temporal });
  // @ts-expect-error: turnTimeoutMs is a number of milliseconds
  void new ConversationClient({ client: temporal, taskQueue: 'q', turnTimeoutMs: '15 minutes' });
  // @ts-expect-error: no option `webUIUrl` (it is `webUiUrl`)
  void new ConversationClient({ client: temporal, taskQueue: 'q', webUIUrl: 'http://localhost:8233' });
  await ConversationClient.connect({ address: 'localhost:7233', namespace: 'default', taskQueue: 'q' });
  // @ts-expect-error: connect needs an address
  await ConversationClient.connect({ namespace: 'default', taskQueue: 'q' });
  // @ts-expect-error: `connection` takes Connection.connect's options but its address
  await ConversationClient.connect({ address: 'a', namespace: 'n', taskQueue: 'q', connection: { tls: 'yes' } });
  // @ts-expect-error: a status is a conversation status
  await client.list({ status: 'done' });
  // @ts-expect-error: dates are Dates
  await client.list({ startedAfter: '2026-01-01' });
}

export function gatewayOptions(): void {
  const token: GatewayToken = { token: 'a-token-of-16-chars', principal: 'alice', admin: false };
  createGatewayHandler({ conversations: client, namespace: 'default', tokens: [token] });
  // @ts-expect-error: namespace is required
  createGatewayHandler({ conversations: client, token: 'a-token-of-16-chars' });
  // @ts-expect-error: a token names its principal and whether it is an admin
  createGatewayHandler({ conversations: client, namespace: 'default', tokens: [{ token: 'a-token-of-16-chars' }] });
  // @ts-expect-error: limits are numbers
  createGatewayHandler({ conversations: client, namespace: 'default', token: 't', maxBodyBytes: '1 MB' });
}

export async function forkOptions(): Promise<void> {
  const _fork = await client.fork('id', { at: { beforeTurn: 2 }, options: { model: 'm' }, message: 'again' });
  expectTrue<Equal<typeof _fork.id, string>>();
  expectTrue<Equal<typeof _fork.turn, number>>();
  expectTrue<Equal<typeof _fork.forkedFrom.workflowId, string>>();
  await client.fork('id', { at: { afterTurn: 1 }, workflowId: 'fork-1', owner: 'alice' });
  // @ts-expect-error: a fork needs a point
  await client.fork('id', { message: 'again' });
  // @ts-expect-error: a turn is a number
  await client.fork('id', { at: { beforeTurn: '2' } });
  // @ts-expect-error: changed options are the conversation's options
  await client.fork('id', { at: { beforeTurn: 2 }, options: { model: 4 } });
  // @ts-expect-error: no option `turn` (a point is `at`)
  await client.fork('id', { at: { beforeTurn: 2 }, turn: 2 });
}
