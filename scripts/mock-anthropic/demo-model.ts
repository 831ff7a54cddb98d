// A deterministic stand-in for Claude that plays the reference documents' tool-use chain, so the orchestrator can be
// exercised end to end without an API key:
//
//   "What is the current stock price of General Motors?"
//     → get_ticker_symbol({company_name: "General Motors"})        (after a short text, as the docs show)
//     → get_current_stock_price({symbol: "GM"})                   (with the symbol the tool returned)
//     → "The current stock price of General Motors (GM) is $38.50."
//
// and "What's the weather in X?" → get_weather({location: X}) → an answer quoting the result. A tool_result with
// `is_error: true` gets a plain end_turn answer quoting the error. Anything else is echoed ("You said: …").
//
// Two protocols:
// - native (the request has `tools`): tool_use / tool_result blocks; only offered tools are called; `tool_choice` is
//   honoured (`tool` forces that tool with the best input it can infer, `any` forces some tool, `none` forbids them).
// - legacy XML (no `tools`; the system prompt lists `<tools>`): the same chain written as `<function_calls>` text,
//   reading `<function_results>` from the latest message and answering in `<answer>` tags.
//
// Then the request's limits apply, as the real API applies them: generation stops at the first stop sequence (which
// is not included in the text; `stop_reason: 'stop_sequence'`), or when `max_tokens` runs out (`stop_reason:
// 'max_tokens'`, a tool_use cut off there keeps only a prefix of its input JSON).
import { estimateTokens } from './tokens';
import type { StopReason } from './types';

type Json = Record<string, unknown>;

export type DemoBlock =
  | { type: 'text'; text: string }
  /** `partialJson`: the call was cut off by max_tokens; only this prefix of its input JSON was generated. */
  | { type: 'tool_use'; name: string; input: Json; partialJson?: string };

export interface DemoReply {
  content: DemoBlock[];
  stop_reason: StopReason;
  stop_sequence: string | null;
}

interface Message {
  role: 'user' | 'assistant';
  content: string | Json[];
}

/** What the model wants to do next, before tool_choice and limits are applied. */
type Plan = { kind: 'call'; name: string; input: Json; preface?: string } | { kind: 'answer'; text: string };

// ---------------------------------------------------------------------------------------------------------------
// Reading requests

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((b): b is Json => isObject(b) && b['type'] === 'text' && typeof b['text'] === 'string')
    .map((b) => b['text'] as string)
    .join('\n');
}

function systemText(body: Json): string {
  return textOf(body['system']);
}

function messagesOf(body: Json): Message[] {
  return Array.isArray(body['messages']) ? (body['messages'] as Message[]) : [];
}

function blocksOf(message: Message | undefined): Json[] {
  return message && Array.isArray(message.content) ? message.content : [];
}

function lastIndexOfRole(messages: Message[], role: Message['role']): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === role) return i;
  return -1;
}

/** The text of the first user message (what scripts match on, and the conversation's original question). */
export function firstUserText(body: unknown): string {
  if (!isObject(body)) return '';
  const first = messagesOf(body).find((m) => isObject(m) && m.role === 'user');
  return first ? textOf(first.content) : '';
}

// ---------------------------------------------------------------------------------------------------------------
// Understanding questions

const COMPANIES: Array<[pattern: RegExp, name: string, ticker: string]> = [
  [/\bgeneral motors\b/i, 'General Motors', 'GM'],
  [/\bapple\b/i, 'Apple', 'AAPL'],
  [/\bmicrosoft\b/i, 'Microsoft', 'MSFT'],
  [/\btesla\b/i, 'Tesla', 'TSLA'],
  [/\bford\b/i, 'Ford', 'F'],
  [/\bamazon\b/i, 'Amazon', 'AMZN'],
  [/\b(?:alphabet|google)\b/i, 'Alphabet', 'GOOGL'],
  [/\bnvidia\b/i, 'NVIDIA', 'NVDA'],
  [/\bnetflix\b/i, 'Netflix', 'NFLX'],
  [/\bboeing\b/i, 'Boeing', 'BA'],
];

const STOCK_INTENT =
  /\b(?:stock|share)\s+price\b|\bticker\b|\bprice of .+ (?:stock|shares)\b|株価|股價|股价|cours (?:actuel )?de l['’]action|harga saham|aktienkurs|precio de (?:la )?acci/i;
const TRAILING_NOISE = /\s+(?:today|now|right now|currently|at the moment|stock|shares|please)$/i;

function cleanName(raw: string): string {
  let name = raw.trim().replace(/^the\s+/i, '');
  while (TRAILING_NOISE.test(name)) name = name.replace(TRAILING_NOISE, '');
  return name.replace(/[\s"'“”]+$/u, '').replace(/^["'“”]+/u, '').trim();
}

function knownCompany(text: string): { name: string; ticker: string } | undefined {
  for (const [pattern, name, ticker] of COMPANIES) if (pattern.test(text)) return { name, ticker };
  return undefined;
}

function tickerFor(company: string): string | undefined {
  return knownCompany(company)?.ticker;
}

function companyIn(text: string): string | undefined {
  const patterns = [
    /\b(?:stock|share)\s+price\s+(?:of|for)\s+([^?!.\n]+)/i,
    /\bprice\s+(?:of|for)\s+([^?!.\n]+?)\s+(?:stock|shares)\b/i,
    /\bticker(?:\s+symbol)?\s+(?:of|for)\s+([^?!.\n]+)/i,
    /([A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*)*)(?:'s|’s)\s+(?:current\s+)?(?:stock|share)\s+price/,
  ];
  for (const pattern of patterns) {
    const found = pattern.exec(text)?.[1];
    if (found) {
      const name = cleanName(found);
      if (name) return knownCompany(name)?.name ?? name;
    }
  }
  return knownCompany(text)?.name;
}

function locationIn(text: string): string | undefined {
  const patterns = [
    /\bweather\s+(?:like\s+)?(?:in|for|at)\s+([^?!\n]+?)(?:\s*[?!]|\.(?:\s|$)|$)/i,
    /\b(?:in|for)\s+([^?!\n]+?)[,]?\s+what(?:'s| is)\s+the\s+weather/i,
    /météo\s+(?:à|a|de|en|pour)\s+([^?!\n]+)/i,
    /^(.+?)的天气/,
    /^(.+?)の天気/,
  ];
  for (const pattern of patterns) {
    const found = pattern.exec(text.trim())?.[1];
    if (found) {
      const location = cleanName(found);
      if (location) return location;
    }
  }
  return undefined;
}

type Intent = { kind: 'stock'; company: string } | { kind: 'weather'; location: string } | { kind: 'chat' };

function intentOf(text: string): Intent {
  if (STOCK_INTENT.test(text)) {
    const company = companyIn(text);
    if (company) return { kind: 'stock', company };
  }
  if (/weather|天气|天氣|天気|météo|cuaca/i.test(text)) {
    const location = locationIn(text);
    if (location) return { kind: 'weather', location };
  }
  return { kind: 'chat' };
}

function echo(text: string): string {
  const said = text.trim();
  return said ? `You said: ${said}` : 'You said nothing I can answer.';
}

function formatPrice(raw: string): string {
  const number = /-?\d+(?:[.,]\d+)?/.exec(raw)?.[0];
  if (number === undefined) return raw.trim();
  const value = Number.parseFloat(number.replace(',', '.'));
  return Number.isFinite(value) ? `$${value.toFixed(2)}` : raw.trim();
}

/** A symbol from a get_ticker_symbol result: plain text ("GM"), or JSON with a symbol/ticker field. */
function symbolFrom(raw: string): string {
  const trimmed = raw.trim();
  try {
    const parsed: unknown = JSON.parse(trimmed);
    if (typeof parsed === 'string') return parsed.trim();
    if (isObject(parsed)) {
      const value = parsed['symbol'] ?? parsed['ticker'] ?? parsed['ticker_symbol'];
      if (typeof value === 'string') return value.trim();
    }
  } catch {
    // plain text
  }
  return trimmed.replace(/^["']|["']$/g, '');
}

function sentence(text: string): string {
  const t = text.trim();
  return /[.!?。]$/.test(t) ? t : `${t}.`;
}

// ---------------------------------------------------------------------------------------------------------------
// Tools offered (native: `tools`; legacy: `<tool_description>`s in the system prompt)

interface ToolInfo {
  name: string;
  /** Parameter names, required ones first. */
  params: string[];
  /** The required parameters (native; legacy descriptions do not say: all of them). */
  required: string[];
  /** JSON Schema type per parameter (native only). */
  types: Record<string, string>;
  /** Allowed values per parameter with an `enum` (native only). */
  enums: Record<string, unknown[]>;
}

function nativeTools(body: Json): Map<string, ToolInfo> {
  const tools = new Map<string, ToolInfo>();
  if (!Array.isArray(body['tools'])) return tools;
  for (const tool of body['tools']) {
    if (!isObject(tool) || typeof tool['name'] !== 'string') continue;
    const schema = isObject(tool['input_schema']) ? tool['input_schema'] : {};
    const properties = isObject(schema['properties']) ? schema['properties'] : {};
    const required = Array.isArray(schema['required']) ? schema['required'].map(String) : [];
    const params = [...new Set([...required, ...Object.keys(properties)])];
    const types: Record<string, string> = {};
    const enums: Record<string, unknown[]> = {};
    for (const [name, prop] of Object.entries(properties)) {
      if (isObject(prop) && typeof prop['type'] === 'string') types[name] = prop['type'];
      if (isObject(prop) && Array.isArray(prop['enum'])) enums[name] = prop['enum'];
    }
    tools.set(tool['name'], { name: tool['name'], params, required, types, enums });
  }
  return tools;
}

function legacyTools(system: string): Map<string, ToolInfo> {
  const tools = new Map<string, ToolInfo>();
  for (const match of system.matchAll(/<tool_description>([\s\S]*?)<\/tool_description>/g)) {
    const section = match[1] ?? '';
    const name = /<tool_name>\s*([\s\S]*?)\s*<\/tool_name>/.exec(section)?.[1]?.trim();
    if (!name) continue;
    const params = [...section.matchAll(/<parameter>\s*<name>\s*([\s\S]*?)\s*<\/name>/g)].map((m) => (m[1] ?? '').trim());
    const names = params.filter(Boolean);
    tools.set(name, { name, params: names, required: names, types: {}, enums: {} });
  }
  return tools;
}

/** The parameter of `tool` that plays `role` (e.g. the tool calls it `company` instead of `company_name`). */
function paramName(tool: ToolInfo | undefined, preferred: string, pattern: RegExp): string {
  if (!tool || tool.params.length === 0) return preferred;
  if (tool.params.includes(preferred)) return preferred;
  return tool.params.find((p) => pattern.test(p)) ?? tool.params[0] ?? preferred;
}

interface Context {
  text: string;
  company?: string;
  symbol?: string;
  location?: string;
}

/**
 * The best input for a tool the model is forced to call: each required parameter (all of them when the schema names
 * none) filled from what the conversation says.
 */
function inferInput(tool: ToolInfo, context: Context): Json {
  const input: Json = {};
  for (const param of tool.required.length > 0 ? tool.required : tool.params) {
    const type = tool.types[param] ?? 'string';
    const allowed = tool.enums[param];
    if (allowed && allowed.length > 0) input[param] = allowed[0];
    else if (/company|organi[sz]ation|firm/i.test(param)) input[param] = context.company ?? context.text;
    else if (/symbol|ticker/i.test(param)) input[param] = context.symbol ?? (context.company && tickerFor(context.company)) ?? context.text;
    else if (/location|city|place|where/i.test(param)) input[param] = context.location ?? context.text;
    else if (type === 'number' || type === 'integer') input[param] = 0;
    else if (type === 'boolean') input[param] = false;
    else if (type === 'array') input[param] = [];
    else if (type === 'object') input[param] = {};
    else input[param] = context.text;
  }
  return input;
}

// ---------------------------------------------------------------------------------------------------------------
// Planning (shared by both protocols)

function planQuestion(text: string, tools: Map<string, ToolInfo>): Plan {
  const intent = intentOf(text);
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

interface Outcome {
  name: string;
  input: Json;
  text: string;
  isError: boolean;
}

/**
 * What to do once tool results are in. `company` is the one the conversation asked about, if known; the native
 * answer names the symbol too ("General Motors (GM)"), the legacy one as the documents word it does not.
 */
function planAfterResults(
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
  for (const outcome of outcomes) {
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
        answers.push(sentence(`The weather in ${firstString ?? 'that location'}: ${outcome.text.trim()}`));
        break;
      default:
        answers.push(sentence(`${outcome.name} returned: ${outcome.text.trim()}`));
    }
  }
  return { kind: 'answer', text: answers.join(' ') };
}

// ---------------------------------------------------------------------------------------------------------------
// Native protocol

function toolResultText(block: Json): string {
  return textOf(block['content']);
}

/** The company the conversation is about: the last get_ticker_symbol call's input, or the first question. */
function conversationCompany(messages: Message[], body: Json): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    for (const block of blocksOf(messages[i])) {
      if (block['type'] === 'tool_use' && block['name'] === 'get_ticker_symbol' && isObject(block['input'])) {
        const value = Object.values(block['input']).find((v): v is string => typeof v === 'string');
        if (value) return value;
      }
    }
  }
  const intent = intentOf(firstUserText(body));
  return intent.kind === 'stock' ? intent.company : undefined;
}

function nativeTurn(body: Json): DemoBlock[] {
  const tools = nativeTools(body);
  const messages = messagesOf(body);
  const userIndex = lastIndexOfRole(messages, 'user');
  const user = messages[userIndex];
  const results = blocksOf(user).filter((b) => b['type'] === 'tool_result');
  const question = textOf(user?.content ?? '');

  let plan: Plan;
  const context: Context = { text: question || firstUserText(body) };
  if (results.length > 0) {
    const calls = new Map<string, Json>();
    for (const block of blocksOf(messages[userIndex - 1])) {
      if (block['type'] === 'tool_use') calls.set(String(block['id']), block);
    }
    const outcomes: Outcome[] = results.map((result) => {
      const call = calls.get(String(result['tool_use_id']));
      return {
        name: typeof call?.['name'] === 'string' ? call['name'] : 'tool',
        input: isObject(call?.['input']) ? call['input'] : {},
        text: toolResultText(result),
        isError: result['is_error'] === true,
      };
    });
    const company = conversationCompany(messages, body);
    plan = planAfterResults(outcomes, tools, company);
    context.company = company;
    const ticker = outcomes.find((o) => o.name === 'get_ticker_symbol' && !o.isError);
    if (ticker) context.symbol = symbolFrom(ticker.text);
  } else {
    plan = planQuestion(question, tools);
    const intent = intentOf(question);
    if (intent.kind === 'stock') context.company = intent.company;
    if (intent.kind === 'weather') context.location = intent.location;
  }

  const choice = isObject(body['tool_choice']) ? body['tool_choice'] : { type: 'auto' };
  switch (choice['type']) {
    case 'none':
      if (plan.kind === 'call') plan = { kind: 'answer', text: `I can't answer that without using the ${plan.name} tool.` };
      break;
    case 'tool': {
      const forced = tools.get(String(choice['name']));
      if (forced && !(plan.kind === 'call' && plan.name === forced.name)) {
        plan = { kind: 'call', name: forced.name, input: inferInput(forced, context) };
      }
      if (plan.kind === 'call') delete plan.preface; // a forced call comes without text, as the API prefills it
      break;
    }
    case 'any': {
      const first = tools.values().next().value;
      if (plan.kind === 'answer' && first) plan = { kind: 'call', name: first.name, input: inferInput(first, context) };
      if (plan.kind === 'call') delete plan.preface;
      break;
    }
    default:
      break;
  }

  if (plan.kind === 'answer') return [{ type: 'text', text: plan.text }];
  const blocks: DemoBlock[] = [];
  if (plan.preface) blocks.push({ type: 'text', text: plan.preface });
  blocks.push({ type: 'tool_use', name: plan.name, input: plan.input });
  return blocks;
}

// ---------------------------------------------------------------------------------------------------------------
// Legacy XML protocol

function isLegacy(body: Json): boolean {
  const hasTools = Array.isArray(body['tools']) && body['tools'].length > 0;
  if (hasTools) return false;
  const system = systemText(body);
  return system.includes('<tools>') || system.includes('<tool_description>');
}

function functionCalls(name: string, input: Json): string {
  const params = Object.entries(input)
    .map(([key, value]) => `<${key}>${typeof value === 'string' ? value : JSON.stringify(value)}</${key}>\n`)
    .join('');
  return `<function_calls>\n<invoke>\n<tool_name>${name}</tool_name>\n<parameters>\n${params}</parameters>\n</invoke>\n</function_calls>`;
}

/** The invocations the assistant wrote in `text`, in order (to know what a `<function_results>` answers). */
function invocations(text: string): Array<{ name: string; input: Json }> {
  const calls: Array<{ name: string; input: Json }> = [];
  for (const match of text.matchAll(/<invoke>([\s\S]*?)(?:<\/invoke>|$)/g)) {
    const section = match[1] ?? '';
    const name = /<tool_name>\s*([\s\S]*?)\s*<\/tool_name>/.exec(section)?.[1]?.trim();
    if (!name) continue;
    const input: Json = {};
    const params = /<parameters>([\s\S]*?)(?:<\/parameters>|$)/.exec(section)?.[1] ?? '';
    for (const param of params.matchAll(/<([A-Za-z_][\w-]*)>([\s\S]*?)<\/\1>/g)) {
      if (param[1]) input[param[1]] = (param[2] ?? '').trim();
    }
    calls.push({ name, input });
  }
  return calls;
}

function legacyTurn(body: Json): DemoBlock[] {
  const tools = legacyTools(systemText(body));
  const messages = messagesOf(body);
  const last = messages[messages.length - 1];
  const lastText = textOf(last?.content ?? '');
  const resultsAt = lastText.lastIndexOf('<function_results>');

  let plan: Plan;
  if (resultsAt >= 0) {
    const results = lastText.slice(resultsAt);
    // What did these results answer? The invocations written just before them (same prefilled turn, or the
    // previous assistant message).
    const before = lastText.slice(0, resultsAt);
    let calls = invocations(before);
    if (calls.length === 0) {
      const assistant = messages[lastIndexOfRole(messages.slice(0, -1), 'assistant')];
      calls = invocations(textOf(assistant?.content ?? ''));
    }
    const outcomes: Outcome[] = [];
    let errorIndex = 0;
    for (const match of results.matchAll(/<result>([\s\S]*?)<\/result>|<error>([\s\S]*?)<\/error>/g)) {
      if (match[1] !== undefined) {
        const name = /<tool_name>\s*([\s\S]*?)\s*<\/tool_name>/.exec(match[1])?.[1]?.trim() ?? 'tool';
        const stdout = /<stdout>([\s\S]*?)<\/stdout>/.exec(match[1])?.[1] ?? match[1];
        const call = calls.find((c) => c.name === name);
        outcomes.push({ name, input: call?.input ?? {}, text: stdout.trim(), isError: false });
      } else {
        const call = calls[errorIndex++];
        outcomes.push({ name: call?.name ?? 'tool', input: call?.input ?? {}, text: (match[2] ?? '').trim(), isError: true });
      }
    }
    const transcript = messages.map((m) => textOf(m.content)).join('\n');
    const named = [...transcript.matchAll(/<company_name>([\s\S]*?)<\/company_name>/g)].pop()?.[1]?.trim();
    const intent = intentOf(firstUserText(body));
    plan = planAfterResults(outcomes, tools, named ?? (intent.kind === 'stock' ? intent.company : undefined), false);
  } else {
    const question = textOf(messages[lastIndexOfRole(messages, 'user')]?.content ?? '');
    plan = planQuestion(question, tools);
    if (plan.kind === 'answer' && plan.text.startsWith('You said:')) return [{ type: 'text', text: plan.text }];
  }
  if (plan.kind === 'call') return [{ type: 'text', text: functionCalls(plan.name, plan.input) }];
  return [{ type: 'text', text: `<answer>${plan.text}</answer>` }];
}

// ---------------------------------------------------------------------------------------------------------------
// Limits: stop sequences, then max_tokens

function applyLimits(blocks: DemoBlock[], body: Json): DemoReply {
  const stops = Array.isArray(body['stop_sequences']) ? body['stop_sequences'].filter((s): s is string => typeof s === 'string' && s !== '') : [];
  const maxTokens = typeof body['max_tokens'] === 'number' ? body['max_tokens'] : Number.POSITIVE_INFINITY;
  const content: DemoBlock[] = [];
  let used = 0;
  for (const block of blocks) {
    if (block.type === 'text') {
      let text = block.text;
      let stopped: string | null = null;
      let at = -1;
      for (const stop of stops) {
        const index = text.indexOf(stop);
        if (index >= 0 && (at < 0 || index < at)) {
          at = index;
          stopped = stop;
        }
      }
      if (stopped !== null) text = text.slice(0, at);
      const tokens = estimateTokens(text);
      if (used + tokens > maxTokens) {
        const kept = text.slice(0, Math.max(0, (maxTokens - used) * 4));
        if (kept) content.push({ type: 'text', text: kept });
        return { content, stop_reason: 'max_tokens', stop_sequence: null };
      }
      used += tokens;
      if (text) content.push({ type: 'text', text });
      if (stopped !== null) return { content, stop_reason: 'stop_sequence', stop_sequence: stopped };
    } else {
      const json = JSON.stringify(block.input);
      const tokens = estimateTokens(block.name + json);
      if (used + tokens > maxTokens) {
        const partialJson = json.slice(0, Math.max(0, (maxTokens - used) * 4 - block.name.length));
        content.push({ type: 'tool_use', name: block.name, input: {}, partialJson });
        return { content, stop_reason: 'max_tokens', stop_sequence: null };
      }
      used += tokens;
      content.push(block);
    }
  }
  const calls = content.some((b) => b.type === 'tool_use');
  return { content, stop_reason: calls ? 'tool_use' : 'end_turn', stop_sequence: null };
}

/** The demo model's reply to a (valid) Messages API request body. */
export function demoReply(body: unknown): DemoReply {
  const request = isObject(body) ? body : {};
  const blocks = isLegacy(request) ? legacyTurn(request) : nativeTurn(request);
  return applyLimits(blocks, request);
}
