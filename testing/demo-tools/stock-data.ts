// The reference documents' small market: company names to ticker symbols, and symbols to prices. Maps, not plain
// objects: a name comes from the model (or a user), and "__proto__" or "constructor" must find nothing.
export const TICKERS: ReadonlyMap<string, string> = new Map([
  ['general motors', 'GM'],
  ['ford motor', 'F'],
  ['ford', 'F'],
  ['apple', 'AAPL'],
  ['microsoft', 'MSFT'],
  ['alphabet', 'GOOGL'],
  ['google', 'GOOGL'],
  ['amazon', 'AMZN'],
  ['tesla', 'TSLA'],
  ['nvidia', 'NVDA'],
]);

export const PRICES: ReadonlyMap<string, number> = new Map([
  ['GM', 38.5],
  ['F', 11.89],
  ['AAPL', 189.84],
  ['MSFT', 415.5],
  ['GOOGL', 141.8],
  ['AMZN', 178.25],
  ['TSLA', 175.34],
  ['NVDA', 875.28],
]);
