import { z } from 'zod';
import { defineTool, ToolError } from '../../activities/tool-definition';

/** A small local data set: the documents' example cities. Temperatures in Celsius. A Map: "__proto__" finds nothing. */
const WEATHER: ReadonlyMap<string, { celsius: number; conditions: string }> = new Map([
  ['san francisco', { celsius: 15, conditions: 'foggy' }],
  ['london', { celsius: 11, conditions: 'light rain' }],
  ['paris', { celsius: 14, conditions: 'partly cloudy' }],
  ['tokyo', { celsius: 19, conditions: 'clear' }],
  ['jakarta', { celsius: 31, conditions: 'humid, thunderstorms later' }],
  ['new york', { celsius: 9, conditions: 'windy' }],
]);

export const getWeather = defineTool({
  name: 'get_weather',
  description: 'Gets the current weather for a given location.',
  returns: 'dict with temperature (float, in the requested unit) and conditions (string).',
  raises: ['ValueError: if the location cannot be found.'],
  input: z.object({
    location: z.string().min(1).describe('The city and state, e.g. San Francisco, CA'),
    unit: z.enum(['celsius', 'fahrenheit']).optional().describe("The unit of temperature, 'celsius' or 'fahrenheit'"),
  }),
  run({ location, unit = 'celsius' }) {
    const city = location.split(',')[0]!.trim().toLowerCase();
    const weather = WEATHER.get(city);
    if (!weather) throw new ToolError('ValueError', `unknown location "${location}"`);
    const temperature = unit === 'fahrenheit' ? Math.round((weather.celsius * 9) / 5 + 32) : weather.celsius;
    return { temperature, unit, conditions: weather.conditions };
  },
});
