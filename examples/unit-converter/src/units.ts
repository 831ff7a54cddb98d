// The units the service knows: each as a factor (and, for temperatures, an offset) to its SI unit.
export type Dimension = 'length' | 'mass' | 'temperature' | 'volume';

export interface Unit {
  symbol: string;
  name: string;
  dimension: Dimension;
  /** value in the SI unit = value × factor + offset */
  factor: number;
  offset?: number;
}

export const SI_UNITS: Record<Dimension, string> = { length: 'm', mass: 'kg', temperature: 'K', volume: 'm³' };

export const UNITS: readonly Unit[] = [
  { symbol: 'm', name: 'metre', dimension: 'length', factor: 1 },
  { symbol: 'km', name: 'kilometre', dimension: 'length', factor: 1000 },
  { symbol: 'cm', name: 'centimetre', dimension: 'length', factor: 0.01 },
  { symbol: 'mi', name: 'mile', dimension: 'length', factor: 1609.344 },
  { symbol: 'ft', name: 'foot', dimension: 'length', factor: 0.3048 },
  { symbol: 'in', name: 'inch', dimension: 'length', factor: 0.0254 },
  { symbol: 'nmi', name: 'nautical mile', dimension: 'length', factor: 1852 },
  { symbol: 'kg', name: 'kilogram', dimension: 'mass', factor: 1 },
  { symbol: 'g', name: 'gram', dimension: 'mass', factor: 0.001 },
  { symbol: 'lb', name: 'pound', dimension: 'mass', factor: 0.45359237 },
  { symbol: 'oz', name: 'ounce', dimension: 'mass', factor: 0.028349523125 },
  { symbol: 'K', name: 'kelvin', dimension: 'temperature', factor: 1 },
  { symbol: '°C', name: 'degree Celsius', dimension: 'temperature', factor: 1, offset: 273.15 },
  { symbol: '°F', name: 'degree Fahrenheit', dimension: 'temperature', factor: 5 / 9, offset: 273.15 - (32 * 5) / 9 },
  { symbol: 'L', name: 'litre', dimension: 'volume', factor: 0.001 },
  { symbol: 'gal', name: 'US gallon', dimension: 'volume', factor: 0.003785411784 },
];

/** A unit by its symbol (exact), or by its name or plural, in any case ("Miles", "degree celsius", "C"). */
export function findUnit(text: string): Unit | undefined {
  const wanted = text.trim();
  const bySymbol = UNITS.find((unit) => unit.symbol === wanted || unit.symbol === `°${wanted}`);
  if (bySymbol) return bySymbol;
  const lower = wanted.toLowerCase().replace(/^degrees? /, 'degree ');
  return UNITS.find((unit) => {
    const name = unit.name.toLowerCase();
    return lower === name || lower === `${name}s` || lower === name.replace(/^degree /, '');
  });
}

/** Ten significant digits: enough for any answer, without the float noise (42.164812800000004). */
export function round(value: number): number {
  return Number(value.toPrecision(10));
}
