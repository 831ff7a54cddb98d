// What a model call offers the model, shared by the model step (ask-model.ts), the budget's estimates (budget-guard.ts)
// and the orchestrator's summary (compact-context.ts): a leaf, so none of them imports another for it.

/** The tools a model call offers, by name; MCP tools come from the run's recorded list `mcpToolSet`. */
export interface OfferedTools {
  tools: string[];
  mcpToolSet?: string;
}
