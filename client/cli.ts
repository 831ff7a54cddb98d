#!/usr/bin/env node
// A terminal front end over the client API: `claude-temporal-orchestrator <command>` (the package's bin), or
// `npm run cli -- <command>` in this repository. USAGE below is what `--help` prints.
//
//   chat [ID]                         talk interactively, replies stream as they are written (creates it if needed)
//   start [--id ID] [MESSAGE]         start a conversation (and send a first message)
//   send ID MESSAGE                   send one message and print the reply
//   transcript ID | state ID          read a conversation
//   tree ID                           the conversation and its sub-agents, as a tree
//   fork ID --before-turn N|--after-turn N [--message TEXT]   a new conversation from a turn of this one
//   fork ID --after-step N.K                               … from a step inside turn N: it answers turn N again
//   list [--status S] [--model M]     list conversations
//   approve ID CALL_ID [--reject] [--reason TEXT]
//   end ID | cancel ID
//   replay-check [--query Q] [--max N] [--bundle FILE]   would the code to deploy replay the recent histories?
//   promote DEPLOYMENT BUILD_ID       make a build its Worker Deployment's current one (docs/upgrading.md)
// Options for new conversations: --tools a,b  --mcp-servers a,b  --model M  --protocol native|legacy-xml  --system TEXT
// --json prints machine-readable JSON (one document per command) and no progress. --help and --version need no
// configuration. Temporal is reached as the worker and the gateway reach it (connection-settings.ts).
import { createInterface } from 'node:readline';
// Stays: the CLI's `gateway` command runs the gateway (required only for that command, in main() below).
import type * as GatewayMain from '../gateway/main';
// Stays: the CLI's `replay-check` command replays with the worker's SDK (required only for that command).
import type * as ReplayCheck from '../workers/replay-check';
import { GATEWAY_USAGE } from '../gateway/usage';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { dataConverterFromEnv } from '../codec/data-converter';
import type { ConversationSnapshot, TokenUsage } from '../common/conversation-types';
import type { StreamEvent } from '../streaming/stream-events';
import { formatUsd } from '../common/pricing';
import { conversationIdSchema } from '../common/conversation-id';
import { parseArgument } from './call-arguments';
import { connectionOptions, loadConnectionSettings } from './connection-settings';
import type { ForkOptions, StartOptions } from './call-options';
import { agentTree, type AgentTreeNode } from './agent-tree';
import { ConversationClient } from './conversation-client';
import { ConfigError } from './environment-config';
import { ConversationError, failureReport } from './errors';
import { packageVersion } from './package-version';
import { followConversation } from './progress';
import { formatMessage, renderLine } from './transcript-format';
import { promoteBuild } from './worker-deployments';

const OPTIONS = {
  json: { type: 'boolean', default: false },
  id: { type: 'string' },
  tools: { type: 'string' },
  'mcp-servers': { type: 'string' },
  model: { type: 'string' },
  'fallback-models': { type: 'string' },
  protocol: { type: 'string' },
  system: { type: 'string' },
  thinking: { type: 'string' },
  effort: { type: 'string' },
  'hide-thinking': { type: 'boolean', default: false },
  threads: { type: 'boolean', default: false },
  batch: { type: 'boolean', default: false },
  tenant: { type: 'string' },
  'tenant-weight': { type: 'string' },
  priority: { type: 'string' },
  status: { type: 'string' },
  reject: { type: 'boolean', default: false },
  reason: { type: 'string' },
  'before-turn': { type: 'string' },
  'after-turn': { type: 'string' },
  'after-step': { type: 'string' },
  message: { type: 'string' },
  query: { type: 'string' },
  max: { type: 'string' },
  bundle: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
  version: { type: 'boolean', default: false },
} as const satisfies ParseArgsConfig['options'];

const { values: flags, positionals } = parsedArguments();

/** The command line; an unknown or malformed flag is said as every other failure is, never as a stack trace. */
function parsedArguments() {
  try {
    return parseArgs({ allowPositionals: true, options: OPTIONS });
  } catch (err) {
    const said = (err as Error).message.slice(0, 500); // it quotes the flag, which may be long
    sayFailure(
      { code: 'invalid_options', message: `${said} (--help lists the options)` },
      process.argv.includes('--json'),
    );
    process.exit(2);
  }
}

/** A failure as the CLI says it: one JSON document on stdout with --json, else one line on stderr. */
function sayFailure(error: { code: string; message: string }, json: boolean): void {
  if (json) console.log(JSON.stringify({ error }));
  else console.error(`error (${error.code}): ${error.message}`);
}

const USAGE = `usage: claude-temporal-orchestrator <command> [options]

  chat [ID]                          talk interactively (or line by line from a pipe); creates the conversation
  start [--id ID] [MESSAGE]          start a conversation; prints its id at once, then the reply to MESSAGE
  send ID MESSAGE                    send one message and print the reply
  transcript ID | state ID           read a conversation
  tree ID                            the conversation and its sub-agents: status, model calls, cost, Web UI link
  fork ID --before-turn N | --after-turn N [--message TEXT] [--id NEW_ID] [--model M] [--system TEXT] [--tools a,b]
                                     a new conversation with ID's transcript up to that turn (docs/fork.md); the
                                     options given change, the rest are ID's. With --message, it prints the fork's
                                     answer beside the original's answer to that turn
  fork ID --after-step N.K [--id NEW_ID] [--model M] …
                                     a fork inside turn N, after its K-th model reply and that reply's tool results:
                                     it goes on with turn N (no tool runs again); prints its answer beside the
                                     original's
  list [--status S] [--model M]      list conversations
  approve ID CALL_ID [--reject] [--reason TEXT]
  end ID | cancel ID
  replay-check [--query Q] [--max N] [--bundle FILE]
                                     replay the namespace's recent conversations (a list filter narrows them; at most
                                     N, default 100) against the workflow code to deploy (a bundle; default this
                                     package's): names each that would break and why, exits 1 if any would
  promote DEPLOYMENT BUILD_ID        make a build current in its Worker Deployment: new conversations start on it,
                                     older runs move to it at their next continue-as-new; an older build: the rollback
  gateway                            the HTTP/SSE gateway and its chat page (claude-temporal-orchestrator-gateway)

New conversations: --tools a,b (default: every tool the task queue's workers run) --mcp-servers a,b --model M
  --fallback-models a,b (tried in turn while the model stays overloaded; the cost line then names each model)
  --protocol native|legacy-xml --system TEXT --thinking adaptive|enabled:BUDGET|disabled|between_tools
  --effort low|medium|high|xhigh|max --threads (message threads: each call sends only the new messages)
  --batch (each model call through a Message Batch: half the price, answers in minutes to hours: docs/batches.md)
  --tenant NAME [--tenant-weight W] --priority 1-5 (its place in a busy task queue: docs/fairness.md; also fork's)
send --priority 1-5: that message's turn only.
chat shows the model's thinking as it streams (thinking> …); --hide-thinking leaves it out.
--json prints one JSON document per command and no progress.

--help prints this, --version the package's version.

Environment (the worker's and the gateway's names): TEMPORAL_ADDRESS (localhost:7233), TEMPORAL_NAMESPACE (default),
TEMPORAL_TASK_QUEUE (claude-conversations); Temporal Cloud or a TLS server: TEMPORAL_API_KEY (turns TLS on),
TEMPORAL_TLS (true|false), TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH (mTLS),
TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME; TEMPORAL_UI_URL (the Web UI's base URL: conversations'
links), PAYLOAD_ENCRYPTION_KEYS.`;

const out = (value: unknown, human: () => void) => (flags.json ? console.log(JSON.stringify(value, null, 2)) : human());

/** A new conversation's options: `--tools`, or every tool the task queue's workers run. */
async function startOptions(client: ConversationClient): Promise<Omit<StartOptions, 'id'>> {
  return {
    tools: flags.tools ? list(flags.tools) : [...(await client.tools())],
    ...(flags['mcp-servers'] && { mcpServers: list(flags['mcp-servers']) }),
    ...(flags.model && { model: flags.model }),
    ...(flags['fallback-models'] && { fallbackModels: list(flags['fallback-models']) }),
    ...(flags.protocol && { protocol: flags.protocol as StartOptions['protocol'] }),
    ...(flags.system && { system: flags.system }),
    ...(flags.thinking && { thinking: thinkingFlag(flags.thinking) }),
    ...(flags.effort && { effort: flags.effort as StartOptions['effort'] }),
    ...(flags.threads && { threads: true }),
    ...(flags.batch && { batch: true }),
    ...placementFlags(),
  };
}

/**
 * `--tenant`, `--tenant-weight`, `--priority` (docs/fairness.md), numbers as given: the client checks them, so
 * `--priority soon` is refused as every bad option is.
 */
function placementFlags(): Pick<StartOptions, 'tenant' | 'tenantWeight' | 'priority'> {
  return {
    ...(flags.tenant !== undefined && { tenant: flags.tenant }),
    ...(flags['tenant-weight'] !== undefined && { tenantWeight: Number(flags['tenant-weight']) }),
    ...(flags.priority !== undefined && { priority: Number(flags.priority) }),
  };
}

/** A fork's changed options: only the flags given (the rest are the origin's). */
function forkChanges(): Omit<StartOptions, 'id' | 'owner' | 'output'> {
  return {
    ...(flags.tools && { tools: list(flags.tools) }),
    ...(flags['mcp-servers'] && { mcpServers: list(flags['mcp-servers']) }),
    ...(flags.model && { model: flags.model }),
    ...(flags['fallback-models'] && { fallbackModels: list(flags['fallback-models']) }),
    ...(flags.system && { system: flags.system }),
    ...(flags.thinking && { thinking: thinkingFlag(flags.thinking) }),
    ...(flags.effort && { effort: flags.effort as StartOptions['effort'] }),
    ...(flags.threads && { threads: true }),
    ...(flags.batch && { batch: true }),
  };
}

/**
 * `--before-turn N`, `--after-turn N` or `--after-step N.K`, as `fork` takes it (checked there: whole numbers from 1
 * on).
 */
function forkPoint(): ForkOptions['at'] {
  const before = flags['before-turn'];
  const afterTurn = flags['after-turn'];
  const afterStep = flags['after-step'];
  if ([before, afterTurn, afterStep].filter((flag) => flag !== undefined).length !== 1) {
    throw new ConversationError(
      'invalid_options',
      'fork needs one of --before-turn N, --after-turn N and --after-step N.K.',
    );
  }
  if (afterStep !== undefined) {
    const [turn, step, ...more] = afterStep.split('.');
    if (step === undefined || more.length > 0) {
      throw new ConversationError('invalid_options', `--after-step is TURN.STEP (2.1: turn 2, after its first step).`);
    }
    return { afterStep: { turn: turnFlag(turn!), step: turnFlag(step) } };
  }
  return before !== undefined ? { beforeTurn: turnFlag(before) } : { afterTurn: turnFlag(afterTurn!) };
}

/** A turn number as typed: digits only (`Number('')` is 0, `Number('0x10')` 16); anything else goes as NaN. */
function turnFlag(text: string): number {
  return /^\s*-?\d+\s*$/.test(text) ? Number(text) : Number.NaN;
}

/** `--thinking adaptive`, `enabled:4096`, …: the option as the conversation takes it (checked there). */
function thinkingFlag(text: string): StartOptions['thinking'] {
  const [type, budget] = text.split(':');
  if (type === 'enabled') return { type, budget_tokens: Number(budget) };
  return { type } as StartOptions['thinking'];
}

function list(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** Shows what runs (model call or tool) and for how long, on one line that rewrites itself. */
function progressLine() {
  let shown = false;
  return {
    update(status: string) {
      if (flags.json || !process.stderr.isTTY) return;
      process.stderr.write(`\r\x1b[2K${status ? `… ${status}` : ''}`);
      shown = status !== '';
    },
    clear() {
      if (shown) process.stderr.write('\r\x1b[2K');
      shown = false;
    },
  };
}

async function send(
  client: ConversationClient,
  id: string,
  text: string,
  start?: Omit<StartOptions, 'id'>,
  onState?: (s: ConversationSnapshot) => Promise<void>,
) {
  const progress = progressLine();
  const from = await client.getTranscript(id).then(
    (t) => t.length + 1,
    () => 1,
  ); // skip the user's own message
  // --priority: a new conversation's (in `start`), else this message's turn's.
  const { priority } = start ? {} : placementFlags();
  const reply = client.sendMessage(id, text, { start, ...(priority !== undefined && { priority }) });
  await followConversation(client, id, reply, {
    from,
    onLine: (line) => {
      progress.clear();
      if (!flags.json && line.kind !== 'assistant') console.log(renderLine(line));
    },
    onRunning: (status) => progress.update(status),
    ...(onState && { onState }),
  });
  progress.clear();
  return reply;
}

/** One turn of `chat`: text printed as it streams, tool calls as they start, approvals asked for as they come. */
async function streamTurn(
  client: ConversationClient,
  id: string,
  text: string,
  start: Omit<StartOptions, 'id'> | undefined,
  ask: (question: string) => Promise<string>,
): Promise<void> {
  let midLine: false | 'text' | 'thinking' = false;
  const endLine = () => {
    if (midLine) process.stdout.write('\n');
    midLine = false;
  };
  for await (const { event, seen, agent } of client.streamMessage(id, text, { start })) {
    if (seen) continue; // a tool call shown already, as it streamed
    if (agent !== undefined) {
      // A sub-agent's step, indented under the call that started it (its approvals are asked for by the parent's).
      const step = agentStep(event);
      if (step) {
        endLine();
        console.log(`${'  '.repeat(agentDepth(id, agent))}${step}`);
      }
      continue;
    }
    switch (event.type) {
      case 'text':
        if (midLine !== 'text') {
          endLine();
          process.stdout.write('claude> ');
        }
        midLine = 'text';
        process.stdout.write(event.text);
        break;
      case 'thinking':
        if (flags['hide-thinking']) break;
        if (midLine !== 'thinking') {
          endLine();
          process.stdout.write(event.redacted ? 'thinking> (redacted)' : 'thinking> ');
        }
        midLine = 'thinking';
        process.stdout.write(event.text);
        break;
      case 'tool_call_started':
        endLine();
        console.log(`→ ${event.name} …`);
        break;
      case 'tool_call_input':
        console.log(`  ${event.name}(${JSON.stringify(event.input)})`);
        break;
      case 'tool_result':
        console.log(`  ← ${event.isError ? 'error: ' : ''}${event.content.split('\n')[0]}`);
        break;
      case 'server_tool_call':
        endLine();
        console.log(`⇢ ${event.name}(${JSON.stringify(event.input)}) (run by the API)`);
        break;
      case 'server_tool_result':
        console.log(`  ⇠ ${event.name}${event.error ? ` error: ${event.error}` : ' answered'}`);
        break;
      case 'model_output_discarded':
        endLine();
        console.log('(the reply above was cut short and is asked again: ignore it)');
        break;
      case 'agent_started':
      case 'agent_finished':
        endLine();
        console.log(`  ${agentStep(event)}`);
        break;
      case 'approval_requested': {
        endLine();
        const { approval } = event;
        const by = approval.agent ? ` (sub-agent ${approval.agent})` : '';
        const answer = await ask(`Allow ${approval.tool}(${JSON.stringify(approval.input)})${by}? [y/N] `);
        await client.approveToolCall(id, {
          callId: approval.callId,
          argumentsDigest: approval.argumentsDigest,
          approve: /^y(es)?$/i.test(answer.trim()),
          ...(approval.agent && { agent: approval.agent }),
        });
        break;
      }
      case 'turn_finished':
        endLine();
        if (event.status !== 'awaiting_user') console.log(`(conversation ${event.status})`);
        break;
      case 'turn_failed':
        endLine();
        console.error(`error (${event.failure.type}): ${event.failure.message}`);
        break;
      default:
        break;
    }
  }
  endLine();
}

/** How deep sub-agent `agent` sits under conversation `id` (1: a child of it): its ids carry the path. */
function agentDepth(id: string, agent: string): number {
  return agent.startsWith(`${id}/`) ? agent.slice(id.length).split('/agent-').length - 1 : 1;
}

/** One line for a sub-agent's step (or its start and end in the parent's stream); undefined for what is not shown. */
function agentStep(event: StreamEvent): string | undefined {
  const firstLine = (text: string) => text.split('\n')[0]!.slice(0, 200);
  switch (event.type) {
    case 'agent_started':
      return `⤷ ${event.tool} (sub-agent ${event.agentId}): ${firstLine(event.task)}`;
    case 'agent_finished': {
      const cost = event.costUsd === undefined ? '' : `, ${formatUsd(event.costUsd)}`;
      return `⤶ ${event.tool} (sub-agent ${event.agentId}) ${event.status}${cost}`;
    }
    case 'tool_call_input':
      return `→ ${event.name}(${JSON.stringify(event.input)})`;
    case 'tool_result':
      return `  ← ${event.isError ? 'error: ' : ''}${firstLine(event.content)}`;
    case 'approval_requested':
      return `(waits for an approval of ${event.approval.tool})`;
    case 'turn_finished':
      return `answer: ${firstLine(event.text)}`;
    case 'turn_failed':
      return `failed (${event.failure.type}): ${firstLine(event.failure.message)}`;
    default:
      return undefined;
  }
}

/** A conversation's sub-agent tree, one line per conversation, its children under it. */
function printTree(node: AgentTreeNode, prefix = '', last = true, root = true): void {
  const calls =
    node.modelCalls === undefined ? '' : `\t${node.modelCalls} model call${node.modelCalls === 1 ? '' : 's'}`;
  const cost = node.costUsd === undefined ? '' : `\t${formatUsd(node.costUsd)}`;
  const link = node.url ? `\t${node.url}` : '';
  const branch = root ? '' : last ? '└─ ' : '├─ ';
  console.log(`${prefix}${branch}${node.id}\t${node.status ?? '(state unreadable)'}${calls}${cost}${link}`);
  const inner = root ? '' : `${prefix}${last ? '   ' : '│  '}`;
  node.children.forEach((child, i) => printTree(child, inner, i === node.children.length - 1 && !node.more, false));
  if (node.more) console.log(`${inner}└─ (${node.more} more not shown)`);
}

/** Until `until` settles, says on stderr which tool calls wait for an approval, and how to give it (once each). */
async function announceApprovals(client: ConversationClient, id: string, until: Promise<unknown>): Promise<void> {
  let done = false;
  const settled = until.then(
    () => (done = true),
    () => (done = true),
  );
  const announced = new Set<string>();
  while (!done) {
    const state = await client.getState(id).catch(() => undefined);
    for (const pending of state?.pendingApprovals ?? []) {
      if (announced.has(pending.callId)) continue;
      announced.add(pending.callId);
      console.error(
        `Waiting for approval of ${pending.tool}(${JSON.stringify(pending.input)}): ` +
          `claude-temporal-orchestrator approve ${id} ${pending.callId} [--reject] [--reason TEXT]`,
      );
    }
    await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, 500))]);
  }
}

/** What the conversation cost so far, after its transcript (unknown: the model has no price). */
async function costLine(client: ConversationClient, id: string): Promise<void> {
  const { usage, costUsd, byModel } = await client.getState(id);
  // With fallback models, what each model answered and cost: a fallback's price is not the first model's.
  const perModel = Object.entries(byModel ?? {}).map(
    ([model, m]) => `${model} ${formatUsd(m.costUsd)} (${m.calls} call${m.calls === 1 ? '' : 's'})`,
  );
  console.log(
    `(cost ${formatUsd(costUsd)} · ${tokenCount(usage)} tokens${perModel.length ? ` · ${perModel.join(', ')}` : ''})`,
  );
}

function tokenCount(usage: TokenUsage): number {
  return usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens + usage.outputTokens;
}

/**
 * Reads stdin a line at a time, a terminal or a pipe alike: lines that come before they are asked for are kept (a pipe
 * writes them all at once), and the end of the input is `undefined`, not an error.
 */
function lineReader(): { ask(question: string): Promise<string | undefined>; close(): void } {
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY });
  const lines = rl[Symbol.asyncIterator]();
  let ended = false;
  return {
    async ask(question) {
      if (ended) return undefined;
      rl.setPrompt(question);
      rl.prompt();
      const next = await lines.next().catch(() => ({ done: true as const, value: undefined }));
      if (next.done) {
        ended = true;
        if (!process.stdin.isTTY) process.stdout.write('\n'); // the prompt's line, ended
        return undefined;
      }
      return next.value;
    },
    close: () => rl.close(),
  };
}

async function chat(client: ConversationClient, id: string): Promise<void> {
  const input = lineReader();
  const exists = await client.getState(id).then(
    () => true,
    () => false,
  );
  console.log(`Conversation ${id}. Type a message; /transcript, /state, /end or /quit.`);
  let first = !exists;
  for (;;) {
    const read = await input.ask('you> ');
    if (read === undefined) break; // end of input (Ctrl-D, or the end of a pipe)
    const line = read.trim();
    if (!line) continue;
    if (line === '/quit') break;
    if (line === '/transcript') {
      for (const message of await client.getTranscript(id))
        for (const l of formatMessage(message)) console.log(renderLine(l));
      continue;
    }
    if (line === '/state') {
      console.log(JSON.stringify(await client.getState(id), null, 2));
      continue;
    }
    if (line === '/end') {
      await client.end(id);
      break;
    }
    try {
      // An approval asked after the input ended is answered no.
      const ask = async (question: string) => (await input.ask(question)) ?? '';
      await streamTurn(client, id, line, first ? await startOptions(client) : undefined, ask);
      first = false;
    } catch (err) {
      sayFailure(failureReport(err), false); // a line: the chat goes on
    }
  }
  input.close();
}

async function main(): Promise<void> {
  const [command, ...rest] = positionals;
  if (flags.version) return console.log(packageVersion());
  if (flags.help && command === 'gateway') return console.log(GATEWAY_USAGE);
  if (!command || flags.help) return console.log(USAGE);
  if (command === 'gateway') {
    // Loaded only for this command: the CLI's other commands need none of the gateway's code.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require('../gateway/main') as typeof GatewayMain).runGateway();
  }
  const dataConverter = dataConverterFromEnv(); // PAYLOAD_ENCRYPTION_KEYS: read what encrypted workers wrote
  const settings = configured(loadConnectionSettings);
  const { address, ...connection } = configured(() => connectionOptions(settings));
  const client = await ConversationClient.connect({
    address,
    connection,
    namespace: settings.TEMPORAL_NAMESPACE,
    taskQueue: settings.TEMPORAL_TASK_QUEUE,
    ...(process.env.TEMPORAL_UI_URL && { webUiUrl: process.env.TEMPORAL_UI_URL }),
    ...(dataConverter && { dataConverter }),
  });
  // Where to read every step of a conversation: on stderr, so stdout stays the answer. With --json, nothing goes to
  // stderr but an error: a script reads one document (`start --json` has the link as `url`).
  const showLink = (id: string): void => {
    const url = client.conversationUrl(id);
    if (url && !flags.json) console.error(`Web UI: ${url}`);
  };
  const need = (value: string | undefined, what: string): string => {
    if (!value) throw new ConversationError('invalid_options', `${command} needs ${what}.`);
    return value;
  };
  // Ids follow the one rule every door applies (common/conversation-id.ts), checked before anything is sent.
  const needId = (value: string | undefined): string =>
    parseArgument(conversationIdSchema, need(value, 'a conversation id'), command, 'conversation id');
  switch (command) {
    case 'chat': {
      const id = rest[0] || flags.id ? needId(rest[0] ?? flags.id) : `conversation-${Date.now()}`;
      showLink(id);
      return chat(client, id);
    }
    case 'start': {
      const message = rest.join(' ') || undefined;
      const id = await client.startConversation({
        ...(await startOptions(client)),
        ...(flags.id && { id: flags.id }),
        ...(message && { firstMessage: message }),
      });
      showLink(id);
      const url = client.conversationUrl(id);
      if (!message) return out({ id, ...(url && { url }) }, () => console.log(id));
      // The id at once, then what the turn waits for, then its reply. With --json, only the document at the end (a
      // turn that waits for an approval shows it in `state ID --json`: pendingApprovals).
      const turn = client.awaitTurn(id, 1);
      if (!flags.json) {
        console.log(id);
        console.error('(waiting for the reply to the first message)');
        await announceApprovals(client, id, turn);
      }
      const reply = await turn;
      return out({ id, ...(url && { url }), reply }, () => console.log(reply.text));
    }
    case 'send': {
      const id = needId(rest[0]);
      showLink(id);
      const reply = await send(client, id, need(rest.slice(1).join(' '), 'a message'));
      return out(reply, () => console.log(reply.text));
    }
    case 'transcript': {
      const id = needId(rest[0]);
      const transcript = await client.getTranscript(id);
      return out(transcript, () => {
        transcript.forEach((m) => formatMessage(m).forEach((l) => console.log(renderLine(l))));
        return costLine(client, id);
      });
    }
    case 'state': {
      const state = await client.getState(needId(rest[0]));
      return out(state, () => console.log(JSON.stringify(state, null, 2)));
    }
    case 'tree': {
      const tree = await agentTree(client, needId(rest[0]));
      return out(tree, () => printTree(tree));
    }
    case 'fork': {
      const origin = needId(rest[0]);
      const message = flags.message;
      const at = forkPoint();
      const fork = await client.fork(origin, {
        at,
        options: forkChanges(),
        ...placementFlags(),
        ...(message !== undefined && { message }),
        ...(flags.id && { workflowId: flags.id }),
      });
      showLink(fork.id);
      const url = client.conversationUrl(fork.id);
      const started = { ...fork, ...(url && { url }) };
      // A fork at a step answers its turn at once: it is waited for as a fork with a message is.
      if (message === undefined && !('afterStep' in at)) return out(started, () => console.log(fork.id));
      // "Replay from here": the fork's answer, and beside it the origin's answer to the same turn, if it has one.
      if (!flags.json) {
        console.log(fork.id);
        console.error(`(waiting for the fork's answer to turn ${fork.turn})`);
      }
      const reply = await client.awaitTurn(fork.id, fork.turn);
      const [originState, forkState] = await Promise.all([client.getState(origin), client.getState(fork.id)]);
      const original = await client.awaitTurn(origin, fork.turn, { timeoutMs: 1_000 }).then(
        (result) => ({ text: result.text, model: originState.model }),
        (err: unknown) => ({ model: originState.model, unavailable: failureReport(err).message }),
      );
      const answers = { original, fork: { text: reply.text, model: forkState.model } };
      return out({ ...started, reply, answers }, () => {
        console.log(`── original (${original.model}), turn ${fork.turn}:`);
        console.log('text' in original ? original.text : `(no answer: ${original.unavailable})`);
        console.log(`── fork (${forkState.model}), turn ${fork.turn}:`);
        console.log(reply.text);
      });
    }
    case 'list': {
      const found = await client.list({
        ...(flags.status && { status: flags.status as ConversationSnapshot['status'] }),
        ...(flags.model && { model: flags.model }),
      });
      return out(found, () =>
        found.forEach((c) =>
          console.log(
            `${c.id}\t${c.status ?? '-'}\t${c.model ?? '-'}\tturns ${c.turns ?? 0}\t${formatUsd(c.costUsd)}\t${c.startTime.toISOString()}`,
          ),
        ),
      );
    }
    case 'approve': {
      const id = needId(rest[0]);
      const callId = need(rest[1], 'a tool call id');
      const pending = (await client.getState(id)).pendingApprovals.find((p) => p.callId === callId);
      if (!pending)
        throw new ConversationError(
          'rejected',
          `No tool call ${JSON.stringify(callId.slice(0, 80))} is waiting for approval.`,
        );
      await client.approveToolCall(id, {
        callId,
        argumentsDigest: pending.argumentsDigest,
        approve: !flags.reject,
        ...(flags.reason && { reason: flags.reason }),
        // A sub-agent's call: the decision goes down to it (workflows/agent-calls.ts).
        ...(pending.agent && { agent: pending.agent }),
      });
      return out({ id, callId, approved: !flags.reject }, () => console.log(flags.reject ? 'rejected' : 'approved'));
    }
    case 'end': {
      const id = needId(rest[0]);
      await client.end(id);
      return out({ ended: id }, () => console.log('ended'));
    }
    case 'cancel': {
      const id = needId(rest[0]);
      await client.cancel(id);
      return out({ cancelled: id }, () => console.log('cancelled'));
    }
    case 'replay-check': {
      // Loaded only for this command: it replays with the worker's SDK, which no other command needs.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const check = require('../workers/replay-check') as typeof ReplayCheck;
      const max = flags.max === undefined ? undefined : Number(flags.max);
      if (max !== undefined && !(Number.isSafeInteger(max) && max >= 1))
        throw new ConversationError('invalid_options', '--max must be a whole number from 1 on.');
      check.quietReplayLogs();
      const result = await check.replayCheck({
        client: client.client,
        ...(flags.query && { query: flags.query }),
        ...(max !== undefined && { maxHistories: max }),
        ...(flags.bundle && { workflowBundlePath: flags.bundle }),
        ...(dataConverter && { dataConverter }),
      });
      out(result, () => {
        for (const b of result.broken) console.log(`would break: ${b.workflowId} (run ${b.runId}): ${b.error}`);
        console.log(`${result.replayed} histories replayed, ${result.broken.length} would break`);
      });
      if (result.broken.length > 0) process.exit(1);
      return;
    }
    case 'promote': {
      const promoted = await promoteBuild(client.client, {
        deploymentName: need(rest[0], 'a deployment name'),
        buildId: need(rest[1], 'a build id'),
      });
      return out(promoted, () =>
        console.log(
          `${promoted.deploymentName}: build ${promoted.buildId} is current` +
            (promoted.previousBuildId ? ` (was ${promoted.previousBuildId})` : ''),
        ),
      );
    }
    default:
      throw new ConversationError('invalid_options', `Unknown command ${JSON.stringify(command.slice(0, 40))}.`);
  }
}

/** A bad setting in the environment is a bad option of this command: reported as every other one is. */
function configured<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof ConfigError) throw new ConversationError('invalid_options', err.message);
    throw err;
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    // Every failure, a ConversationError or not, as { code, message }: one JSON document, or one line.
    sayFailure(failureReport(err), flags.json);
    process.exit(1);
  },
);
