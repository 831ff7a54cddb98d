// The demo's sub-agents (`npm run demo:agents`): an agent tool that researches one company with the stock tools, and
// may buy its shares (buy_stock needs a person's approval, which comes through the parent). Exported on their own,
// not in `demoTools`, so a worker with the default demo tools offers no sub-agent.
import { defineAgentTool } from '../../activities/agent-tool-definition';
import type { ToolDefinition } from '../../activities/tool-definition';

/** The tools a research sub-agent may use (the demo's own). */
export const RESEARCH_TOOLS = ['get_ticker_symbol', 'get_current_stock_price', 'buy_stock'];

export const researchCompany = defineAgentTool({
  name: 'research_company',
  description:
    'Hands one company to a research sub-agent: it looks up the ticker and current stock price, and buys shares ' +
    'when the task asks it to. Give it a task about one company, complete in itself.',
  agent: {
    system: 'You research one company with your tools and answer in one sentence.',
    tools: RESEARCH_TOOLS,
  },
  timeout: '5 minutes',
});

/** The demo's agent tools: add them to a worker's tools next to `demoTools`. */
export const researchAgentTools: ToolDefinition[] = [researchCompany] as ToolDefinition[];
