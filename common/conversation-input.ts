// What a conversation workflow is started with: its options, a first message, and — continue-as-new only — the state
// and the event log the previous run handed over. A file of its own because it joins the conversation's types with the
// streaming log's (streaming/stream-event-schema.ts), which name the conversation's types themselves. Types only:
// workflow-safe.
import type { AgentLineage } from './agents';
import type { CarriedState, ForkedFrom } from './conversation-types';
import type { ConversationOptions } from './options';
import type { ConversationStreamInput } from '../streaming/stream-event-schema';

export interface ConversationInput {
  /** The format it was written in (common/input-format.ts); absent: format 1. */
  v?: number;
  options: ConversationOptions;
  /** The first user message, when the conversation is started with one. */
  firstMessage?: string;
  /** A sub-agent's place under its parent (common/agents.ts): set only by the parent conversation that starts it. */
  agent?: AgentLineage;
  /** The state a run starts from: the previous run's (continue-as-new), or a fork point's (with `forkedFrom`). */
  carried?: CarriedState;
  /** A fork's origin (common/fork.ts): written by the client that forks, with `carried` cut by the origin. */
  forkedFrom?: ForkedFrom;
  /** The event log the previous run handed over (continue-as-new only; a 0.1.0 run handed over its older format). */
  stream?: ConversationStreamInput;
}
