// The reference documents' demo, as request fixtures: the tools of the stock-price chain (native), and the same
// tools described in a legacy XML system prompt and answered in `<function_results>` blocks, both rendered by the
// real legacy protocol (workflows/protocols/legacy-xml), so the demo model is tested on what the project sends.
import type { Tool } from '@anthropic-ai/sdk/resources/messages';
import { LEGACY_STOP_SEQUENCE, renderFunctionResults, renderToolsPrompt } from '../../common/protocols/legacy-xml';

export const DEMO_MODEL = 'claude-sonnet-4-6';

export const GET_TICKER_SYMBOL = {
  name: 'get_ticker_symbol',
  description:
    'Gets the stock ticker symbol for a company searched by name. Returns str: The ticker symbol for the company ' +
    'stock. Raises TickerNotFound: if no matching ticker symbol is found.',
  input_schema: {
    type: 'object',
    properties: { company_name: { type: 'string', description: 'The name of the company.' } },
    required: ['company_name'],
  },
} satisfies Tool;

export const GET_CURRENT_STOCK_PRICE = {
  name: 'get_current_stock_price',
  description:
    'Gets the current stock price for a company. Returns float: The current stock price. Raises ValueError: if the ' +
    'input symbol is invalid/unknown.',
  input_schema: {
    type: 'object',
    properties: { symbol: { type: 'string', description: 'The stock symbol of the company to get the price for.' } },
    required: ['symbol'],
  },
} satisfies Tool;

export const GET_WEATHER = {
  name: 'get_weather',
  description: 'Get the current weather in a given location',
  input_schema: {
    type: 'object',
    properties: {
      location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' },
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    },
    required: ['location'],
  },
} satisfies Tool;

export const DEMO_TOOLS: Tool[] = [GET_TICKER_SYMBOL, GET_CURRENT_STOCK_PRICE, GET_WEATHER];

export const STOCK_QUESTION = 'What is the current stock price of General Motors?';

/** The tools the stock question needs, by name (what a conversation's `tools` option lists). */
export const STOCK_TOOLS = [GET_TICKER_SYMBOL.name, GET_CURRENT_STOCK_PRICE.name];

/** The stock tools described for the legacy format, by the project's own renderer: what a legacy conversation sends. */
export const LEGACY_SYSTEM_PROMPT = renderToolsPrompt([GET_CURRENT_STOCK_PRICE, GET_TICKER_SYMBOL]);

export { LEGACY_STOP_SEQUENCE };

/** A `<function_results>` user message for a successful legacy call. */
export function legacyResult(toolName: string, stdout: string): string {
  return renderFunctionResults([{ callId: 'fixture', name: toolName, isError: false, content: stdout }]);
}

/** A `<function_results>` user message for a legacy call that raised (no tool name: the bare `<error>` message). */
export function legacyError(message: string): string {
  return renderFunctionResults([{ callId: 'fixture', name: '', isError: true, content: message }]);
}
