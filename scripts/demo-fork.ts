// `npm run demo:fork`: "replay from here with another model" (docs/fork.md), end to end. A conversation asks for
// General Motors' stock price (two tool calls), then Ford's (two more). The demo forks it before turn 2 with another
// model and system prompt and sends the same second question: the fork starts from turn 1's transcript — tool
// results included, no tool runs again — and the two answers to turn 2 are printed side by side, with each one's
// Web UI link. Both conversations stay in the namespace, the fork listed under `ForkedFrom = "<origin>"`.
// Without ANTHROPIC_API_KEY the local Messages API's demo model plays both parts.
//
//   npm run demo:fork                 the dev server stays up (Ctrl-C ends) when run in a terminal
//   npm run demo:fork -- --exit       stop everything after the answers
import { randomUUID } from 'node:crypto';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { ConversationClient } from '../client/conversation-client';
import { formatMessage, renderLine } from '../client/transcript-format';
import { DEFAULT_MODEL } from '../common/options';
import { demoTools } from '../testing/demo-tools';
import { STOCK_QUESTION, STOCK_TOOLS } from '../testing/messages-api/fixtures';
import { startMessagesApi } from '../testing/messages-api/server';
import { createAnthropic } from '../workers/anthropic-client';
import { ConfigError, loadConfig } from '../workers/config';
import { demoArgs, demoDevServer, modelLine, startDemoWorker, stopDevServerWhenDone, webUiLink } from './demo-parts';

const SECOND_QUESTION = 'What is the current stock price of Ford?';
/** The fork's model: another one than the origin's (with the local API, the same demo model answers both). */
const FORK_MODEL = process.env.FORK_MODEL || 'claude-opus-4-1';
const FORK_SYSTEM = 'Answer in one short sentence.';

async function main(): Promise<void> {
  const { exitWhenDone } = demoArgs();
  Runtime.install({ logger: new DefaultLogger('ERROR') });

  const mock = process.env.ANTHROPIC_API_KEY ? undefined : await startMessagesApi();
  const model = process.env.ANTHROPIC_MODEL || DEFAULT_MODEL;
  const config = loadConfig({ ...process.env, ...(mock && { ANTHROPIC_BASE_URL: mock.url }) });
  console.log(modelLine(mock?.url, 'deterministic demo model', model, config.ANTHROPIC_BASE_URL));
  const { server, uiUrl } = await demoDevServer();

  const taskQueue = `demo-fork-${randomUUID().slice(0, 8)}`;
  const worker = await startDemoWorker(server, { taskQueue, anthropic: createAnthropic(config), tools: demoTools });
  const { client } = worker;
  const conversations = new ConversationClient({
    client,
    taskQueue,
    tools: demoTools.map((tool) => tool.name),
    ...(uiUrl && { webUiUrl: uiUrl }),
  });
  const link = (id: string) => (uiUrl ? webUiLink(uiUrl, server, id) : '(set TEMPORAL_UI_URL for the link)');

  const id = `demo-fork-origin-${randomUUID().slice(0, 8)}`;
  console.log(`\nConversation ${id} (${model})`);
  await conversations.sendMessage(id, STOCK_QUESTION, { start: { model, tools: STOCK_TOOLS } });
  const original = await conversations.sendMessage(id, SECOND_QUESTION);
  for (const message of await conversations.getTranscript(id)) {
    for (const line of formatMessage(message)) console.log(renderLine(line));
  }
  const toolRuns = (await conversations.getState(id)).toolCalls;

  console.log(`\nFork before turn 2, with ${FORK_MODEL} and the system prompt "${FORK_SYSTEM}", the same question:`);
  const started = Date.now();
  const fork = await conversations.fork(id, {
    at: { beforeTurn: 2 },
    options: { model: FORK_MODEL, system: FORK_SYSTEM },
    message: SECOND_QUESTION,
  });
  console.log(`${fork.id} started in ${Date.now() - started} ms from ${id}'s state before turn 2`);
  const forked = await conversations.awaitTurn(fork.id, fork.turn);
  const forkState = await conversations.getState(fork.id);

  console.log(`\nTurn 2, side by side:`);
  console.log(`  original (${model}):  ${original.text}`);
  console.log(`  fork (${FORK_MODEL}):  ${forked.text}`);
  console.log(
    `\nThe fork's tool calls: ${forkState.toolCalls} of its own (turn 1's ${toolRuns - original.toolCalls} results came ` +
      `with the transcript; none ran again).`,
  );
  console.log(`Web UI, origin: ${link(id)}`);
  console.log(`Web UI, fork:   ${link(fork.id)}   (ForkedFrom = "${id}")`);

  await worker.stop();
  await mock?.close();
  await stopDevServerWhenDone(server, exitWhenDone);
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
