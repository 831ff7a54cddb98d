// Keeps a conversation's typed search attributes in step with its state. Each write is one history event, so only
// changes are written; every status change goes through here. A new conversation usually starts with the attributes
// its first write would set (the client sets them with the start: common/search-attributes.ts startingAttributes), and
// then writes nothing until something changes.
import { upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { conversationSearchAttributes, searchAttributePairs } from '../common/search-attributes';
import type { ConversationState } from './conversation-state';

export function searchAttributesPublisher(state: ConversationState): () => void {
  let published = workflowInfo().continuedFromExecutionRunId === undefined ? attributesAtStart() : '';
  return () => {
    const snapshot = state.snapshot();
    const { usage } = snapshot;
    const pairs = searchAttributePairs({
      status: snapshot.status,
      model: snapshot.model,
      protocol: snapshot.protocol,
      turns: snapshot.turns,
      toolCalls: snapshot.toolCalls,
      inputTokens: usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens,
      costUsd: snapshot.costUsd,
      contextTokens: snapshot.context.inputTokens,
      contextTokensBefore: snapshot.context.inputTokensBefore,
      awaitingApproval: snapshot.pendingApprovals.length > 0,
    });
    const values = JSON.stringify(pairs.map((pair) => pair.value));
    if (values === published) return;
    published = values;
    upsertSearchAttributes(pairs);
  };
}

/**
 * The values the run started with, as the publisher compares them. Only for a run the client started: a run that
 * continue-as-new started always writes once, as it always has (so histories of such runs replay as they ran).
 */
function attributesAtStart(): string {
  const started = workflowInfo().typedSearchAttributes;
  return JSON.stringify(conversationSearchAttributes.map((key) => started.get(key as never) ?? null));
}
