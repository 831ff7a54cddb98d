// The floor: a plain Temporal tool-use chain doing only the necessary work — one activity per model call (posting the
// chain's request to the model, bare-activities.ts), one per tool call, until the model stops asking for tools — with
// no state, no transcript, no summaries, no search attributes. Started and awaited the way conversations are
// (update-with-start, the update resolving when the chain is done), so the difference to a conversation is the
// orchestrator's own work. Bundled on its own (bundleWorkflowCode).
import type { MessageParam, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { allHandlersFinished, condition, defineUpdate, proxyActivities, setHandler } from '@temporalio/workflow';
import type { BareActivities } from './bare-worker';

export const BARE_WORKFLOW = 'bareChain';
export const bareRunUpdate = defineUpdate<number, []>('run');

interface BareChainInput {
  prompt: string;
  maxModelCalls: number;
}

// The conversation's own activity options (model-step.ts, tool-activities.ts defaults): the same timeouts, so a task
// lost under overload is retried after the same heartbeat timeout.
const { bareModel } = proxyActivities<BareActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 12 },
});
const { bareTool } = proxyActivities<BareActivities>({
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
});

export async function bareChain(input: BareChainInput): Promise<number> {
  let toolCalls = 0;
  let done = false;
  setHandler(bareRunUpdate, async () => {
    await condition(() => done);
    return toolCalls;
  });
  let messages: MessageParam[] = [{ role: 'user', content: input.prompt }];
  for (let call = 0; call < input.maxModelCalls; call++) {
    const reply = await bareModel({ messages });
    const uses = reply.content.filter((block) => block.type === 'tool_use');
    if (reply.stopReason !== 'tool_use' || uses.length === 0) break;
    const results: ToolResultBlockParam[] = [];
    for (const use of uses) {
      const outcome = await bareTool({ name: use.name, input: use.input });
      results.push({ type: 'tool_result', tool_use_id: use.id, content: outcome.content, is_error: outcome.isError });
      toolCalls++;
    }
    messages = [{ role: 'user', content: results }];
  }
  done = true;
  await condition(allHandlersFinished);
  return toolCalls;
}
