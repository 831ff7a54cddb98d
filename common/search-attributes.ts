// Typed search attributes a conversation keeps up to date, so people can filter conversations in the Web UI
// (`ConversationStatus = "awaiting_user"`) and the client can list them. The dev server registers exactly
// these (testing/dev-server/ reads this list), so a name or a type is written once, here.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const ConversationStatus = defineSearchAttributeKey('ConversationStatus', SearchAttributeType.KEYWORD);
export const ConversationModel = defineSearchAttributeKey('ConversationModel', SearchAttributeType.KEYWORD);
export const ConversationProtocol = defineSearchAttributeKey('ConversationProtocol', SearchAttributeType.KEYWORD);
export const ConversationTurns = defineSearchAttributeKey('ConversationTurns', SearchAttributeType.INT);
export const ConversationToolCalls = defineSearchAttributeKey('ConversationToolCalls', SearchAttributeType.INT);
// Token counts are DOUBLE, not INT: the dev server's SQLite visibility store allows only three INT attributes
// per namespace. Filtering works the same (`ConversationInputTokens > 10000`).
export const ConversationInputTokens = defineSearchAttributeKey('ConversationInputTokens', SearchAttributeType.DOUBLE);
/** USD so far (common/pricing.ts); unset while the model has no price. It took the place of an output-token count. */
export const ConversationCostUsd = defineSearchAttributeKey('ConversationCostUsd', SearchAttributeType.DOUBLE);
/** The latest model call's input tokens after compaction or clearing (what the model's context holds now)… */
export const ConversationContextTokens = defineSearchAttributeKey(
  'ConversationContextTokens',
  SearchAttributeType.DOUBLE,
);
/** …and before (INT: the dev server's SQLite store has no fourth DOUBLE). */
export const ConversationContextTokensBefore = defineSearchAttributeKey(
  'ConversationContextTokensBefore',
  SearchAttributeType.INT,
);
export const ConversationAwaitingApproval = defineSearchAttributeKey(
  'ConversationAwaitingApproval',
  SearchAttributeType.BOOL,
);

export const conversationSearchAttributes = [
  ConversationStatus,
  ConversationModel,
  ConversationProtocol,
  ConversationTurns,
  ConversationToolCalls,
  ConversationInputTokens,
  ConversationCostUsd,
  ConversationContextTokens,
  ConversationContextTokensBefore,
  ConversationAwaitingApproval,
] as const;
