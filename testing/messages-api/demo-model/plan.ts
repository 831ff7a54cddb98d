// What the demo model does next, for both protocols: call a tool (with a short preface) or answer — for a new
// question, and once tool results are in.
import { echo, formatPrice, intentOf, leadingLine, sentence, symbolFrom, tickerFor } from './intent';
import { delegate } from './delegate';
import { isAgentTool, paramName, type ToolInfo } from './offered-tools';
import type { Json } from './types';

/**
 * What the model wants to do next, before tool_choice and limits are applied. `more`: further calls in the same reply
 * (a coordinator's sub-agents, run at once).
 */
export type Plan =
  | { kind: 'call'; name: string; input: Json; preface?: string; more?: Array<{ name: string; input: Json }> }
  | { kind: 'answer'; text: string };

export function planQuestion(text: string, tools: Map<string, ToolInfo>): Plan {
  const delegated = delegate(text, tools);
  if (delegated) {
    const [first, ...more] = delegated.calls;
    return { kind: 'call', ...first!, preface: delegated.preface, ...(more.length > 0 && { more }) };
  }
  const intent = intentOf(text);
  if (intent.kind === 'buy') {
    const buy = tools.get('buy_stock');
    const ticker = tickerFor(intent.company);
    if (buy && ticker) {
      return {
        kind: 'call',
        name: buy.name,
        input: { symbol: ticker, quantity: intent.quantity },
        preface: `I'll place an order for ${intent.quantity} shares of ${intent.company} (${ticker}).`,
      };
    }
    return { kind: 'answer', text: `I don't have a tool to buy shares of ${intent.company}.` };
  }
  if (intent.kind === 'stock') {
    const lookup = tools.get('get_ticker_symbol');
    if (lookup) {
      return {
        kind: 'call',
        name: lookup.name,
        input: { [paramName(lookup, 'company_name', /company|name/i)]: intent.company },
        preface: `To answer this, I'll first look up the ticker symbol for ${intent.company}.`,
      };
    }
    const price = tools.get('get_current_stock_price');
    const ticker = tickerFor(intent.company);
    if (price && ticker) {
      return {
        kind: 'call',
        name: price.name,
        input: { [paramName(price, 'symbol', /symbol|ticker/i)]: ticker },
        preface: `${intent.company} trades as ${ticker}; let me get its current price.`,
      };
    }
    return { kind: 'answer', text: `I don't have a tool to look up the stock price of ${intent.company}.` };
  }
  if (intent.kind === 'weather') {
    const weather = tools.get('get_weather');
    if (weather) {
      return {
        kind: 'call',
        name: weather.name,
        input: { [paramName(weather, 'location', /location|city|place/i)]: intent.location },
        preface: `Let me check the current weather in ${intent.location}.`,
      };
    }
    return { kind: 'answer', text: `I don't have a tool to check the weather in ${intent.location}.` };
  }
  return { kind: 'answer', text: echo(text) };
}

export interface Outcome {
  name: string;
  input: Json;
  text: string;
  isError: boolean;
}

/**
 * What to do once tool results are in. `company` is the one the conversation asked about, if known; the native
 * answer names the symbol too ("General Motors (GM)"), the legacy one as the documents word it does not.
 */
export function planAfterResults(
  outcomes: Outcome[],
  tools: Map<string, ToolInfo>,
  company: string | undefined,
  withSymbol = true,
): Plan {
  const errors = outcomes.filter((o) => o.isError);
  if (errors.length > 0) {
    return { kind: 'answer', text: `I couldn't look that up: ${errors.map((e) => e.text.trim()).join('; ')}` };
  }
  const answers: string[] = [];
  // Sub-agents' answers are combined: each one's first line, after a word that says whose they are.
  const fromAgents = outcomes.filter((o) => isAgentTool(tools.get(o.name)));
  if (fromAgents.length > 0) answers.push(fromAgents.length === 1 ? 'The sub-agent found:' : 'The sub-agents found:');
  for (const outcome of outcomes) {
    if (isAgentTool(tools.get(outcome.name))) {
      answers.push(sentence(leadingLine(outcome.text)));
      continue;
    }
    const firstString = Object.values(outcome.input).find((v): v is string => typeof v === 'string');
    switch (outcome.name) {
      case 'get_ticker_symbol': {
        const symbol = symbolFrom(outcome.text);
        const name = firstString ?? company ?? 'the company';
        const price = tools.get('get_current_stock_price');
        if (price) {
          return {
            kind: 'call',
            name: price.name,
            input: { [paramName(price, 'symbol', /symbol|ticker/i)]: symbol },
            preface: `${name} trades as ${symbol}. Now I'll get its current stock price.`,
          };
        }
        answers.push(`The ticker symbol for ${name} is ${symbol}.`);
        break;
      }
      case 'get_current_stock_price': {
        const symbol = firstString ?? '';
        const price = formatPrice(outcome.text);
        answers.push(
          company && symbol && withSymbol
            ? `The current stock price of ${company} (${symbol}) is ${price}.`
            : `The current stock price of ${company ?? symbol} is ${price}.`,
        );
        break;
      }
      case 'get_weather':
        answers.push(sentence(`The weather in ${firstString ?? 'that location'}: ${leadingLine(outcome.text)}`));
        break;
      default:
        answers.push(sentence(`${outcome.name} returned: ${leadingLine(outcome.text)}`));
    }
  }
  return { kind: 'answer', text: answers.join(' ') };
}
