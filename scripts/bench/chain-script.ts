// The chain every measurement runs: N tool_use replies, alternating get_weather and get_ticker_symbol, then a final
// end_turn text. Scripted on the local Messages API server per conversation (a unique tag in the first message), so
// the model's side is identical for the orchestrator and the in-process loop, and costs the server the same.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineTool } from '../../activities/tool-definition';
import type { MessagesApi, ScriptStep } from '../../testing/messages-api/types';

export const CHAIN_TOOLS = ['get_weather', 'get_ticker_symbol'];

const CITIES = ['Paris', 'Tokyo', 'London', 'Jakarta', 'New York', 'San Francisco'];
const COMPANIES = ['General Motors', 'Ford', 'Apple', 'Microsoft', 'Tesla'];

export function chainSteps(steps: number): ScriptStep[] {
  const replies: ScriptStep[] = [];
  for (let i = 0; i < steps; i++) {
    const call =
      i % 2 === 0
        ? { type: 'tool_use' as const, name: 'get_weather', input: { location: CITIES[(i / 2) % CITIES.length]! } }
        : {
            type: 'tool_use' as const,
            name: 'get_ticker_symbol',
            input: { company_name: COMPANIES[((i - 1) / 2) % COMPANIES.length]! },
          };
    replies.push({
      reply: {
        content: [{ type: 'text', text: `Step ${i + 1}: let me look that up.` }, call],
        stop_reason: 'tool_use',
      },
    });
  }
  replies.push({
    reply: { content: [{ type: 'text', text: `Done after ${steps} lookups.` }], stop_reason: 'end_turn' },
  });
  return replies;
}

/** Scripts `steps` for a first user message no other conversation uses (a unique tag, then `text`); returns it. */
export function scriptTagged(mock: MessagesApi, label: string, steps: ScriptStep[], text: string): string {
  const tag = `[${label}-${randomUUID()}]`;
  mock.script(tag, steps);
  return `${tag} ${text}`;
}

/** A first user message no other conversation uses; the mock answers it with the chain. */
export function scriptChain(mock: MessagesApi, steps: number, label = 'bench'): string {
  return scriptTagged(
    mock,
    label,
    chainSteps(steps),
    'Check the weather and some ticker symbols for me, one lookup at a time.',
  );
}

/** The /v1/messages requests of one conversation (by its tag, in the first user message), in arrival order. */
export function requestsOf(mock: MessagesApi, prompt: string): MessagesApi['requests'] {
  const tag = prompt.slice(0, prompt.indexOf(']') + 1);
  return mock.requests.filter((request) => request.path === '/v1/messages' && request.match === tag);
}

/** The built-in tool bench:mcp and bench:tracing call: `Echo: <message>`, like server-everything's echo. */
export const echoTool = defineTool({
  name: 'echo',
  description: 'Echoes back the input',
  input: z.object({ message: z.string() }),
  run: ({ message }) => `Echo: ${message}`,
});

/** A load's script (load.ts) of `calls` calls of `tool` ({message: "m<i>"}), then "done": bench:mcp, :tracing, :threads. */
export function echoCalls(tool: string, calls: number): (mock: MessagesApi, label: string) => string {
  const steps: ScriptStep[] = Array.from({ length: calls }, (_, i) => ({
    reply: { content: [{ type: 'tool_use', name: tool, input: { message: `m${i}` } }], stop_reason: 'tool_use' },
  }));
  steps.push({ reply: { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' } });
  return (mock, label) => scriptTagged(mock, label, steps, `Call ${tool} ${calls} times.`);
}
