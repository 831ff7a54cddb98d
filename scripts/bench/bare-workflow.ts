// The ceiling Temporal itself sets: a workflow that does what a conversation does per step — one "model" activity,
// then one "tool" activity — with no state, no transcript, no summaries, no search attributes. Started and awaited
// the way conversations are (update-with-start, the update resolving when the chain is done), so the difference
// to a conversation is the orchestrator's own per-step work. Bundled on its own (bundleWorkflowCode).
import { allHandlersFinished, condition, defineUpdate, proxyActivities, setHandler } from '@temporalio/workflow';
import type { BareActivities } from './bare-activities';

export const BARE_WORKFLOW = 'bareChain';
export const bareRunUpdate = defineUpdate<number, []>('run');

export interface BareChainInput {
  steps: number;
  latencyMs: number;
}

// The conversation's own activity options (model-step.ts, tool-activities.ts defaults): the same timeouts, so a task
// lost under overload is retried after the same heartbeat timeout (the echoes finish long before they need a beat).
const { echoModel } = proxyActivities<BareActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 12 },
});
const { echoTool } = proxyActivities<BareActivities>({
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
});

export async function bareChain(input: BareChainInput): Promise<number> {
  let done = false;
  setHandler(bareRunUpdate, async () => {
    await condition(() => done);
    return input.steps;
  });
  for (let step = 0; step < input.steps; step++) {
    const reply = await echoModel({ latencyMs: input.latencyMs, step });
    await echoTool({ step, text: reply.text });
  }
  await echoModel({ latencyMs: input.latencyMs, step: input.steps }); // the final answer
  done = true;
  await condition(allHandlersFinished);
  return input.steps;
}
