// Keeps a conversation's typed search attributes in step with its state. Each write is one history event, so only
// changes are written; every status change goes through here.
import { upsertSearchAttributes } from '@temporalio/workflow';
import * as attributes from '../common/search-attributes';
import type { ConversationState } from './conversation-state';

export function searchAttributesPublisher(state: ConversationState): () => void {
  let published = '';
  return () => {
    const snapshot = state.snapshot();
    const { usage } = snapshot;
    const pairs = [
      { key: attributes.ConversationStatus, value: snapshot.status },
      { key: attributes.ConversationModel, value: snapshot.model },
      { key: attributes.ConversationProtocol, value: snapshot.protocol },
      { key: attributes.ConversationTurns, value: snapshot.turns },
      { key: attributes.ConversationToolCalls, value: snapshot.toolCalls },
      {
        key: attributes.ConversationInputTokens,
        value: usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens,
      },
      // Unknown (no price): unset, so `ConversationCostUsd > 1` never lists an unpriced conversation as cheap.
      { key: attributes.ConversationCostUsd, value: snapshot.costUsd },
      { key: attributes.ConversationContextTokens, value: snapshot.context.inputTokens },
      { key: attributes.ConversationContextTokensBefore, value: snapshot.context.inputTokensBefore },
      { key: attributes.ConversationAwaitingApproval, value: snapshot.pendingApprovals.length > 0 },
    ];
    const values = JSON.stringify(pairs.map((pair) => pair.value));
    if (values === published) return;
    published = values;
    upsertSearchAttributes(pairs);
  };
}
