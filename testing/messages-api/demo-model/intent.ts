// What a question asks: a stock price (and of which company), the weather (and where), or nothing the demo knows
// (it echoes). Plus the small text helpers the answers use.
import { isObject } from './read-request';

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
  return name
    .replace(/[\s"'“”]+$/u, '')
    .replace(/^["'“”]+/u, '')
    .trim();
}

function knownCompany(text: string): { name: string; ticker: string } | undefined {
  for (const [pattern, name, ticker] of COMPANIES) if (pattern.test(text)) return { name, ticker };
  return undefined;
}

/** Every known company `text` names, in the order it names them (each once). */
export function companiesIn(text: string): Array<{ name: string; ticker: string }> {
  const found: Array<{ name: string; ticker: string; at: number }> = [];
  for (const [pattern, name, ticker] of COMPANIES) {
    const at = text.search(pattern);
    if (at >= 0) found.push({ name, ticker, at });
  }
  return found.sort((a, b) => a.at - b.at).map(({ name, ticker }) => ({ name, ticker }));
}

export function knownCompanyName(text: string): string | undefined {
  return knownCompany(text)?.name;
}

export function tickerFor(company: string): string | undefined {
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

export type Intent =
  | { kind: 'stock'; company: string }
  | { kind: 'buy'; company: string; quantity: number }
  | { kind: 'weather'; location: string }
  | { kind: 'chat' };

export const BUY_INTENT = /\bbuy\s+(\d{1,5})\s+shares?\s+of\s+([^?!.\n[]+)/i;

export function intentOf(text: string): Intent {
  const buy = BUY_INTENT.exec(text);
  if (buy) {
    const company = knownCompany(buy[2]!)?.name;
    if (company) return { kind: 'buy', company, quantity: Number(buy[1]) };
  }
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

export function echo(text: string): string {
  const said = text.trim();
  return said ? `You said: ${said}` : 'You said nothing I can answer.';
}

export function formatPrice(raw: string): string {
  const number = /-?\d+(?:[.,]\d+)?/.exec(raw)?.[0];
  if (number === undefined) return raw.trim();
  const value = Number.parseFloat(number.replace(',', '.'));
  return Number.isFinite(value) ? `$${value.toFixed(2)}` : raw.trim();
}

/** A result's first line: what a long result (a report with readings after it) leads with. */
export function leadingLine(raw: string): string {
  return raw.trim().split('\n')[0]!.trim();
}

/** A symbol from a get_ticker_symbol result: plain text ("GM"), or JSON with a symbol/ticker field. */
export function symbolFrom(raw: string): string {
  const trimmed = leadingLine(raw);
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

export function sentence(text: string): string {
  const t = text.trim();
  return /[.!?。]$/.test(t) ? t : `${t}.`;
}
