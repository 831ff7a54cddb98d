// The agent tool the rig worker (scripts/rig-worker.ts) adds to the demo tools when RIG_AGENT_TOOLS=1, for the
// sub-agent crash tests: `research_company`, a child conversation with the two stock tools. Its model calls heartbeat
// within 2 s, so a child's model call on a SIGKILLed worker is retried within seconds, not the default 30.
import { defineAgentTool } from '../activities/agent-tool-definition';

export const researchCompany = defineAgentTool({
  name: 'research_company',
  description: 'Researches one company: its ticker symbol and current stock price.',
  agent: {
    system: 'You research one company with your tools and answer in one sentence.',
    tools: ['get_ticker_symbol', 'get_current_stock_price'],
    timeouts: { modelHeartbeat: '2 seconds' },
  },
});

export const rigAgentTools = [researchCompany];
