// This service's tools. Each becomes an activity of its own on the worker; the model sees the name, the description
// and the JSON Schema of the zod input. A ToolError is an answer the model can act on (not retried).
import { z } from 'zod';
import { defineTool, ToolError } from 'claude-temporal-orchestrator/tools';
import { findUnit, round, SI_UNITS, UNITS, type Unit } from './units';

function unit(text: string): Unit {
  const found = findUnit(text);
  if (!found) {
    const known = UNITS.map((u) => u.symbol).join(', ');
    throw new ToolError('UnknownUnit', `no unit called "${text}" (known: ${known})`);
  }
  return found;
}

export const convertUnits = defineTool({
  name: 'convert_units',
  description:
    'Converts a quantity from one unit to another of the same dimension (length, mass, temperature, volume).',
  returns: 'The converted value and its unit symbol.',
  raises: ['UnknownUnit: a unit it does not know.', 'IncompatibleUnits: units of different dimensions.'],
  input: z.object({
    value: z.number().describe('The quantity to convert.'),
    from: z.string().min(1).describe('The unit of the quantity: a symbol or a name, e.g. "mi" or "mile".'),
    to: z.string().min(1).describe('The unit to convert to, e.g. "km".'),
  }),
  run({ value, from, to }) {
    const source = unit(from);
    const target = unit(to);
    if (source.dimension !== target.dimension) {
      throw new ToolError(
        'IncompatibleUnits',
        `cannot convert ${source.dimension} (${source.symbol}) to ${target.dimension} (${target.symbol})`,
      );
    }
    const si = value * source.factor + (source.offset ?? 0);
    return { value: round((si - (target.offset ?? 0)) / target.factor), unit: target.symbol };
  },
});

export const lookupUnit = defineTool({
  name: 'lookup_unit',
  description: 'Looks up a unit by symbol or name: its full name, what it measures and its size in SI units.',
  raises: ['UnknownUnit: a unit it does not know.'],
  input: z.object({ unit: z.string().min(1).describe('A unit symbol or name, e.g. "nmi" or "nautical mile".') }),
  run(input) {
    const found = unit(input.unit);
    const si = SI_UNITS[found.dimension];
    return {
      symbol: found.symbol,
      name: found.name,
      dimension: found.dimension,
      definition: found.offset
        ? `x ${found.symbol} = (x × ${round(found.factor)} + ${round(found.offset)}) ${si}`
        : `1 ${found.symbol} = ${round(found.factor)} ${si}`,
    };
  },
});

export const tools = [convertUnits, lookupUnit];
