// The bench chain's two tools for the peer, with the data and answers of testing/demo-tools (get_weather,
// get_ticker_symbol), so the tool work is the same on every side. Activities: the AI SDK's tools run in the workflow,
// and the integration's way to give a tool I/O is an activity its `execute` calls.
import { ApplicationFailure } from '@temporalio/common';
import { TICKERS } from '../../../testing/demo-tools/stock-data';

const WEATHER: ReadonlyMap<string, { celsius: number; conditions: string }> = new Map([
  ['san francisco', { celsius: 15, conditions: 'foggy' }],
  ['london', { celsius: 11, conditions: 'light rain' }],
  ['paris', { celsius: 14, conditions: 'partly cloudy' }],
  ['tokyo', { celsius: 19, conditions: 'clear' }],
  ['jakarta', { celsius: 31, conditions: 'humid, thunderstorms later' }],
  ['new york', { celsius: 9, conditions: 'windy' }],
]);

export async function getWeather({
  location,
  unit = 'celsius',
}: {
  location: string;
  unit?: 'celsius' | 'fahrenheit';
}) {
  const weather = WEATHER.get(location.split(',')[0]!.trim().toLowerCase());
  if (!weather) throw ApplicationFailure.nonRetryable(`unknown location "${location}"`, 'ValueError');
  const temperature = unit === 'fahrenheit' ? Math.round((weather.celsius * 9) / 5 + 32) : weather.celsius;
  return { temperature, unit, conditions: weather.conditions };
}

export async function getTickerSymbol({ company_name }: { company_name: string }): Promise<string> {
  const key = company_name
    .trim()
    .toLowerCase()
    .replace(/[,.]|\b(inc|corp|corporation|company|co)\b/g, '')
    .trim();
  const symbol = TICKERS.get(key);
  if (!symbol) throw ApplicationFailure.nonRetryable(`no ticker for "${company_name}"`, 'TickerNotFound');
  return symbol;
}
