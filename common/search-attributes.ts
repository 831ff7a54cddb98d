// Typed search attributes a conversation keeps up to date, so people can filter conversations in the Web UI
// (`ConversationStatus = "awaiting_user"`) and the client can list them, and the owner the gateway records at start.
// The dev server registers exactly registeredSearchAttributes (testing/dev-server/ reads this list; docker-compose.yml
// lists the same), so a name or a type is written once, here.
import {
  defineSearchAttributeKey,
  type SearchAttributePair,
  SearchAttributeType,
  type SearchAttributeUpdatePair,
} from '@temporalio/common';

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

/**
 * Who a conversation belongs to: the gateway's principal that started it (gateway/gateway-config.ts), set by the client
 * with the start (StartOptions.owner) and never written again. Not in conversationSearchAttributes, the ones the
 * workflow keeps up to date: the workflow neither reads nor writes it (its upserts name their own keys, so the owner
 * stays), and continue-as-new carries it (a new run keeps the search attributes it is not given). Unset on a
 * conversation started without an owner (by the CLI or the client directly): only a gateway admin sees those.
 */
export const ConversationOwner = defineSearchAttributeKey('ConversationOwner', SearchAttributeType.KEYWORD);

/**
 * The conversation that started this one as a sub-agent (workflows/agent-calls.ts), set with the child's start and
 * never written again: `ConversationParent = "<id>"` lists a conversation's sub-agents. Unset on every other one.
 */
export const ConversationParent = defineSearchAttributeKey('ConversationParent', SearchAttributeType.KEYWORD);

/**
 * The conversation this one was forked from (common/fork.ts), set by the client with the fork's start and never written
 * again: `ForkedFrom = "<id>"` lists a conversation's forks. Unset on every other one.
 */
export const ForkedFrom = defineSearchAttributeKey('ForkedFrom', SearchAttributeType.KEYWORD);

/**
 * Every attribute a server needs registered: the ones the workflow keeps up to date, the owner, the parent and the
 * fork's origin.
 */
export const registeredSearchAttributes = [
  ...conversationSearchAttributes,
  ConversationOwner,
  ConversationParent,
  ForkedFrom,
] as const;

/** The attributes a conversation shows, in the order conversationSearchAttributes lists them. */
export interface ShownAttributes {
  status: string;
  model: string;
  protocol: string;
  turns: number;
  toolCalls: number;
  inputTokens: number;
  /** null: unknown (no price); the attribute is then unset. */
  costUsd: number | null;
  contextTokens: number;
  contextTokensBefore: number;
  awaitingApproval: boolean;
}

/** The attributes to write; a null value unsets its attribute. */
export function searchAttributePairs(shown: ShownAttributes): SearchAttributeUpdatePair[] {
  return [
    { key: ConversationStatus, value: shown.status },
    { key: ConversationModel, value: shown.model },
    { key: ConversationProtocol, value: shown.protocol },
    { key: ConversationTurns, value: shown.turns },
    { key: ConversationToolCalls, value: shown.toolCalls },
    { key: ConversationInputTokens, value: shown.inputTokens },
    // Unknown (no price): unset, so `ConversationCostUsd > 1` never lists an unpriced conversation as cheap.
    { key: ConversationCostUsd, value: shown.costUsd },
    { key: ConversationContextTokens, value: shown.contextTokens },
    { key: ConversationContextTokensBefore, value: shown.contextTokensBefore },
    { key: ConversationAwaitingApproval, value: shown.awaitingApproval },
  ] as SearchAttributeUpdatePair[];
}

/** The attributes a workflow starts with (the set ones: a start cannot unset). */
export function startSearchAttributes(shown: ShownAttributes): SearchAttributePair[] {
  return searchAttributePairs(shown).filter((pair): pair is SearchAttributePair => pair.value !== null);
}

/**
 * What a conversation shows when it starts, which the client sets with the start itself: the conversation is listed
 * (model, status) before its first workflow task, and that task has no attributes to write.
 */
export function startingAttributes(
  options: { model: string; protocol: string },
  withMessage: boolean,
): ShownAttributes {
  return {
    status: withMessage ? 'running' : 'awaiting_user',
    model: options.model,
    protocol: options.protocol,
    turns: 0,
    toolCalls: 0,
    inputTokens: 0,
    costUsd: 0,
    contextTokens: 0,
    contextTokensBefore: 0,
    awaitingApproval: false,
  };
}
