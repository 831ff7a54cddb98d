// `npm run demo:agents`: a coordinator that hands work to sub-agents (agent tools, issue #33), end to end. Asked to
// research General Motors and Ford and buy 10 shares of Ford, the coordinator calls its `research_company` agent tool
// twice in one reply; the two child conversations run at once, each with the stock tools. Ford's sub-agent calls
// buy_stock, which needs approval: the request surfaces in the coordinator's pendingApprovals (with the child's id)
// and this script approves it there, on the parent, saying so. The coordinator then combines the answers, and the
// script prints the tree of conversations and calls, what each cost and the total, and a Web UI link for each.
// Without ANTHROPIC_API_KEY the local Messages API's demo model plays every part.
//
//   npm run demo:agents               the dev server stays up (Ctrl-C ends) when run in a terminal
//   npm run demo:agents -- --exit     stop everything after the answer
//   npm run demo:agents -- --protocol legacy-xml   the coordinator with prompt-based XML tool use (its sub-agents native)
import { randomUUID } from 'node:crypto';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { ConversationClient } from '../client/conversation-client';
import { toolCallSummary } from '../common/summaries';
import { DEFAULT_MODEL } from '../common/options';
import { demoTools } from '../testing/demo-tools';
import { RESEARCH_TOOLS, researchAgentTools, researchCompany } from '../testing/demo-tools/research-agents';
import { startMessagesApi } from '../testing/messages-api/server';
import { createAnthropic } from '../workers/anthropic-client';
import { ConfigError, loadConfig } from '../workers/config';
import { readConversationTree, renderConversationTree } from './agent-tree';
import {
  converse,
  demoArgs,
  demoDevServer,
  modelLine,
  startDemoWorker,
  stopDevServerWhenDone,
  webUiLink,
} from './demo-parts';

const QUESTION = 'Research General Motors and Ford for me, and buy 10 shares of Ford.';

async function main(): Promise<void> {
  const { exitWhenDone, protocol } = demoArgs();
  Runtime.install({ logger: new DefaultLogger('ERROR') });

  const mock = process.env.ANTHROPIC_API_KEY ? undefined : await startMessagesApi();
  const model = process.env.ANTHROPIC_MODEL || DEFAULT_MODEL;
  const config = loadConfig({ ...process.env, ...(mock && { ANTHROPIC_BASE_URL: mock.url }) });
  console.log(modelLine(mock?.url, 'deterministic demo model', model, config.ANTHROPIC_BASE_URL));

  const { server, uiUrl } = await demoDevServer();

  // A task queue of its own: a worker of another command on the default queue would not know the agent tool.
  const taskQueue = `demo-agents-${randomUUID().slice(0, 8)}`;
  const tools = [...demoTools, ...researchAgentTools];
  const worker = await startDemoWorker(server, { taskQueue, anthropic: createAnthropic(config), tools });
  const conversations = new ConversationClient({
    client: worker.client,
    taskQueue,
    tools: tools.map((tool) => tool.name),
  });
  const id = `demo-agents-${randomUUID().slice(0, 8)}`;
  console.log(`Agent tool: ${researchCompany.name} (a child conversation with ${RESEARCH_TOOLS.join(', ')})`);

  // A sub-agent's call that needs approval waits in the coordinator's pendingApprovals, named by the child's id; the
  // demo plays the person and approves it there, on the parent, which sends the decision down to the child.
  const approved = new Set<string>();
  await converse({
    conversations,
    id,
    question: QUESTION,
    start: { model, protocol, tools: [researchCompany.name], closeAfterFirstReply: true },
    toolKind: 'tool',
    server,
    ...(uiUrl && { uiUrl }),
    async onState(state) {
      for (const pending of state.pendingApprovals) {
        const key = `${pending.agent ?? id}|${pending.callId}`;
        if (approved.has(key)) continue;
        approved.add(key);
        console.log(
          `approval   ${pending.agent ? `sub-agent ${pending.agent}` : 'the coordinator'} asks to run ` +
            `${toolCallSummary(pending.tool, pending.input)}: the demo approves it itself, via approveToolCall on ` +
            `the parent ${id}`,
        );
        await conversations
          .approveToolCall(id, {
            callId: pending.callId,
            argumentsDigest: pending.argumentsDigest,
            approve: true,
            reason: 'approved by the demo',
            ...(pending.agent !== undefined && { agent: pending.agent }),
          })
          .catch((err: unknown) => {
            approved.delete(key); // asked again at the next poll
            console.log(`approval   not yet taken (${err instanceof Error ? err.message : String(err)}); trying again`);
          });
      }
    },
  });

  const tree = await readConversationTree(conversations, id);
  console.log('\nTree of conversations and calls:');
  const approvedCalls = [...approved].map((key) => key.split('|')[0]!);
  for (const line of renderConversationTree(tree, {
    link: (workflowId) => uiUrl && webUiLink(uiUrl, server, workflowId),
    note: (agentId, call) =>
      approvedCalls.includes(agentId) && call.startsWith('buy_stock(') ? 'approved through the parent' : undefined,
  })) {
    console.log(line);
  }

  await worker.stop();
  await mock?.close();
  await stopDevServerWhenDone(server, exitWhenDone);
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
