// The reference documents' small market: company names to ticker symbols, and symbols to prices.
export const TICKERS: Readonly<Record<string, string>> = {
  'general motors': 'GM',
  'ford motor': 'F',
  ford: 'F',
  apple: 'AAPL',
  microsoft: 'MSFT',
  alphabet: 'GOOGL',
  google: 'GOOGL',
  amazon: 'AMZN',
  tesla: 'TSLA',
  nvidia: 'NVDA',
};

export const PRICES: Readonly<Record<string, number>> = {
  GM: 38.5,
  F: 11.89,
  AAPL: 189.84,
  MSFT: 415.5,
  GOOGL: 141.8,
  AMZN: 178.25,
  TSLA: 175.34,
  NVDA: 875.28,
};
