// How far sub-agents may go: numbers only, a leaf, so the options' schema (options.ts) and the sub-agents' rules
// (agents.ts, which names the options' type) import it without importing each other.

/** How deep sub-agents may nest when the root conversation does not say (`limits.maxAgentDepth`). */
export const DEFAULT_MAX_AGENT_DEPTH = 2;
/** The most sub-agents one reply may start (`limits.maxAgentCallsPerReply`); the reply's later calls get an error. */
export const DEFAULT_MAX_AGENT_CALLS_PER_REPLY = 4;
/** The deepest nesting any conversation may ask for. */
export const MAX_AGENT_DEPTH = 8;
/** The most sub-agents any conversation may allow in one reply. */
export const MAX_AGENT_CALLS_PER_REPLY = 64;
