// Keeping the transcript the model sees in step with what was compacted, and the context accounting up to date.
//
// - After each reply: its input tokens before and after any compaction or clearing; and when the API compacted (the
//   reply opens with a compaction block), the messages before the reply leave the transcript — the API ignores them
//   from now on, so neither the next run, nor the model activity, nor the worker's cache carries them.
// - Before each model call, when the orchestrator summarises itself (compaction `by: 'orchestrator'`) and the next
//   call would pass the trigger: one `summariseContext` activity, retried like any model call; the older messages
//   give way to its summary. If it fails for good the conversation goes on uncompacted. The call goes out through the
//   door (model-requests.ts) like every model call, checked against the budget at its worst case first: if it would
//   not fit, nothing is sent and the turn ends over budget.
import { ApplicationFailure } from '@temporalio/common';
import { setCurrentDetails } from '@temporalio/workflow';
import type { CallModelResult, SummariseContextResult } from '../common/activity-contracts';
import type { BudgetRefusal } from '../common/budget';
import { compactionOf } from '../common/compaction';
import { contextOfUsage, estimatedNextInput } from '../common/context-accounting';
import { summarisingItself } from '../common/context-options';
import { summaryCut, summaryMessage } from '../common/orchestrator-summary';
import { firstLine } from '../common/summaries';
import { jsonBytes } from '../common/utf8-length';
import { type NextCall, summaryEstimate } from './budget-guard';
import type { ConversationState } from './conversation-state';
import { type Admission, admit, sendSummary, UNCHECKED } from './model-requests';

/** Right after a reply entered the transcript. */
export function followContext(state: ConversationState, reply: CallModelResult): void {
  // A reply without `context` was sampled from its usage's prompt (and 0.1.0 always sent one).
  const call = reply.context ?? contextOfUsage(reply.usage);
  state.recordCallContext(call, reply.usage.outputTokens);
  const at = state.transcript.length - 1;
  const block = compactionOf(state.transcript[at]);
  if (!block || at === 0) return;
  state.compactHead(at, []);
  state.recordCompaction({
    afterCall: state.modelCalls,
    by: 'api',
    inputTokensBefore: call.inputTokensBefore,
    messages: at,
    summary: block.content ?? '',
  });
  setCurrentDetails(compactionDetails(state));
}

/**
 * Before a model call: the orchestrator's own compaction, when it is due. Returns the budget's refusal when the
 * summary call would not fit (checked only when `everyRequestChecked`: false for histories from before the
 * every-request patch).
 */
export async function compactIfDue({
  state,
  offered,
  everyRequestChecked,
}: NextCall): Promise<BudgetRefusal | undefined> {
  const { options } = state;
  const context = options.contextManagement;
  if (!summarisingItself(context)) return undefined;
  const newMessages = state.newMessages();
  const expected = estimatedNextInput(state.context, jsonBytes(newMessages));
  if (expected < context.compaction.triggerTokens) return undefined;
  const cut = summaryCut(state.transcript);
  if (cut === undefined) return undefined;
  const admission: Admission | BudgetRefusal = everyRequestChecked
    ? admit(state, summaryEstimate(state, context.compaction.summaryMaxTokens))
    : UNCHECKED;
  if (!admission.ok) return admission;

  const summary = `summarise context · messages 1–${cut} of ${state.transcript.length} · ~${expected} tokens`;
  setCurrentDetails(`Compacting the context: ${summary}`);
  state.startActivity('summary', { kind: 'model', name: summary, startedAt: new Date().toISOString() });
  const container = state.liveContainer();
  let sent;
  try {
    sent = await sendSummary(
      state,
      admission,
      {
        callNumber: state.modelCalls,
        transcriptLength: state.transcript.length,
        newMessages,
        ...(state.sentUpTo === 0 && { fullContext: options.system !== undefined ? { system: options.system } : {} }),
        ...(state.lastReplyId !== undefined && { afterReply: state.lastReplyId }),
        request: {
          model: options.model,
          maxTokens: context.compaction.summaryMaxTokens,
          protocol: options.protocol,
          tools: offered.tools,
          ...(offered.mcpToolSet !== undefined && { mcpToolSet: offered.mcpToolSet }),
          promptCaching: options.promptCaching,
          // The summarised messages may hold server tool blocks (a search, code run in the container): the request
          // offers those tools too, and sends the container back, as every model call does.
          ...(options.serverTools && { serverTools: options.serverTools }),
          ...(container !== undefined && { container }),
          // The summary is text: the model may not call a tool here.
          toolChoice: { type: 'none' },
        },
        summariseUpTo: cut,
        ...(context.compaction.instructions !== undefined && { instructions: context.compaction.instructions }),
      },
      { summary, activityId: `summary-${state.modelCalls}` },
    );
  } finally {
    state.finishActivity('summary');
  }
  if (sent.kind === 'refused') return sent.refusal;
  if (sent.kind === 'failed') {
    const err = sent.failure;
    const cause = err.cause instanceof ApplicationFailure ? err.cause : undefined;
    setCurrentDetails(
      `Could not summarise the context (${cause?.type ?? 'failure'}: ${cause?.message ?? err.message}); going on without.`,
    );
    return undefined;
  }
  const result: SummariseContextResult = sent.value;
  state.recordExtraUsage(result.usage);
  state.compactHead(cut, [summaryMessage(result.summary)]);
  state.recordCompaction({
    afterCall: state.modelCalls,
    by: 'orchestrator',
    inputTokensBefore: result.inputTokensBefore,
    messages: cut,
    summary: result.summary,
  });
  setCurrentDetails(compactionDetails(state));
  return undefined;
}

/** `Context compacted (API) after call 72: 141 messages, 61,234 input tokens → summary: "The user asked…"` */
function compactionDetails(state: ConversationState): string {
  const last = state.context.lastCompaction!;
  const by = last.by === 'api' ? 'by the API' : 'by the orchestrator';
  return (
    `Context compacted ${by} after call ${last.afterCall} (compaction ${state.context.compactions}): ` +
    `${last.messages} messages, ${last.inputTokensBefore} input tokens → summary: ${firstLine(last.summary, 200)}`
  );
}
