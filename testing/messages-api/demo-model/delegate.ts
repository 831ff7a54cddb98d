// The coordinator: offered an agent tool (a sub-agent), the demo model hands each company a question names to a
// sub-agent of its own, all in one reply — a task to buy shares when the question asks to buy that company's, else
// its stock price. Without an agent tool, or a company it knows, it plans as before.
import { BUY_INTENT, companiesIn, knownCompanyName } from './intent';
import { isAgentTool, type ToolInfo } from './offered-tools';
import type { Json } from './types';

export interface Delegation {
  /** One agent tool call per company, in the order the question names them. */
  calls: Array<{ name: string; input: Json }>;
  preface: string;
}

/** The agent tool to delegate to: one whose name says research, else the first offered. */
function agentTool(tools: Map<string, ToolInfo>): ToolInfo | undefined {
  const agents = [...tools.values()].filter(isAgentTool);
  return agents.find((tool) => /research/i.test(tool.name)) ?? agents[0];
}

/** One call of an agent tool per company `text` names, or undefined when there is nothing to delegate. */
export function delegate(text: string, tools: Map<string, ToolInfo>): Delegation | undefined {
  const tool = agentTool(tools);
  const companies = companiesIn(text);
  if (!tool || companies.length === 0) return undefined;
  const buy = BUY_INTENT.exec(text);
  const bought = buy ? knownCompanyName(buy[2]!) : undefined;
  const calls = companies.map(({ name }) => ({
    name: tool.name,
    input: {
      task:
        buy && name === bought
          ? `Buy ${Number(buy[1])} shares of ${name}.`
          : `What is the current stock price of ${name}?`,
    },
  }));
  return {
    calls,
    preface: `I'll hand ${companies.length === 1 ? 'this' : 'each company'} to a sub-agent: ${companies.map((c) => c.name).join(', ')}.`,
  };
}
