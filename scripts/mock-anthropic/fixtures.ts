// The reference documents' demo, as request fixtures: the tools of the stock-price chain (native), and the same
// tools described in a legacy XML system prompt (as in the legacy tool-use documents, including their stray newline
// inside `<tool_name>get_current_stock_price\n</tool_name>`).
import type { Tool } from '@anthropic-ai/sdk/resources/messages';

export const DEMO_MODEL = 'claude-sonnet-4-6';

export const GET_TICKER_SYMBOL: Tool = {
  name: 'get_ticker_symbol',
  description:
    'Gets the stock ticker symbol for a company searched by name. Returns str: The ticker symbol for the company ' +
    'stock. Raises TickerNotFound: if no matching ticker symbol is found.',
  input_schema: {
    type: 'object',
    properties: { company_name: { type: 'string', description: 'The name of the company.' } },
    required: ['company_name'],
  },
};

export const GET_CURRENT_STOCK_PRICE: Tool = {
  name: 'get_current_stock_price',
  description:
    'Gets the current stock price for a company. Returns float: The current stock price. Raises ValueError: if the ' +
    'input symbol is invalid/unknown.',
  input_schema: {
    type: 'object',
    properties: { symbol: { type: 'string', description: 'The stock symbol of the company to get the price for.' } },
    required: ['symbol'],
  },
};

export const GET_WEATHER: Tool = {
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
};

export const DEMO_TOOLS: Tool[] = [GET_TICKER_SYMBOL, GET_CURRENT_STOCK_PRICE, GET_WEATHER];

export const STOCK_QUESTION = 'What is the current stock price of General Motors?';

export const LEGACY_SYSTEM_PROMPT = `In this environment you have access to a set of tools you can use to answer the user's question.

You may call them like this:
<function_calls>
<invoke>
<tool_name>$TOOL_NAME</tool_name>
<parameters>
<$PARAMETER_NAME>$PARAMETER_VALUE</$PARAMETER_NAME>
...
</parameters>
</invoke>
</function_calls>

Here are the tools available:
<tools>
<tool_description>
<tool_name>get_current_stock_price
</tool_name><description>Gets the current stock price for a company. Returns float: The current stock price.
Raises ValueError: if the input symbol is invalid/unknown.</description>
<parameters>
<parameter>
<name>symbol</name>
<type>string</type>
<description>The stock symbol of the company to get the price for.</description>
</parameter>
</parameters>
</tool_description>

<tool_description>
<tool_name>get_ticker_symbol</tool_name>
<description>Gets the stock ticker symbol for a company searched by name. Returns str: The ticker symbol for the company stock. Raises TickerNotFound: if no matching ticker symbol is found.
</description>
<parameters>
<parameter>
<name>company_name</name>
<type>string</type>
<description>The name of the company.</description>
</parameter>
</parameters>
</tool_description></tools>`;

export const LEGACY_STOP_SEQUENCE = '</function_calls>';

/** A `<function_results>` user message for a successful legacy call. */
export function legacyResult(toolName: string, stdout: string): string {
  return `<function_results>\n<result>\n<tool_name>${toolName}</tool_name>\n<stdout>\n${stdout}\n</stdout>\n</result>\n</function_results>`;
}

/** A `<function_results>` user message for a legacy call that raised. */
export function legacyError(message: string): string {
  return `<function_results>\n<error>\n${message}\n</error>\n</function_results>`;
}
