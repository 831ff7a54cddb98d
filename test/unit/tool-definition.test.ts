// Defining tools: names checked up front, zod schemas rendered as the Messages API's input_schema.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { defineTool, describeTool } from '../../activities/tool-definition';
import { getWeather } from '../../testing/demo-tools/get-weather';

test('a tool name that the Messages API would reject fails at definition time', () => {
  const define = (name: string) => defineTool({ name, description: 'x', input: z.object({}), run: () => 'ok' });
  assert.throws(() => define('get weather'), /must match/);
  assert.throws(() => define('x'.repeat(65)), /must match/);
  assert.throws(() => define('callModel'), /reserved/);
  assert.equal(define('get-weather_2').name, 'get-weather_2');
});

test('the zod input schema becomes a JSON Schema object with descriptions, enums and required fields', () => {
  const described = describeTool(getWeather);
  assert.equal(described.input_schema.type, 'object');
  assert.deepEqual(described.input_schema.required, ['location']);
  const properties = described.input_schema.properties as Record<
    string,
    { type?: string; enum?: string[]; description?: string }
  >;
  assert.equal(properties.location!.type, 'string');
  assert.equal(properties.location!.description, 'The city and state, e.g. San Francisco, CA');
  assert.deepEqual(properties.unit!.enum, ['celsius', 'fahrenheit']);
  assert.equal('$schema' in described.input_schema, false);
  assert.match(described.raises!.join(), /ValueError/);
});
