// Type tests of the options a service writes for its tools, its worker, its conversations and its tests, as it
// imports them from the package's entry points. Never run: `tsc --noEmit -p .` checks this file (tsconfig includes
// test/), and every `@ts-expect-error` below must meet an error or tsc fails (TS2578), so each block proves the
// compiler refuses that mistake. The rest proves the JSDoc @example of each option compiles.
import type { NativeConnection } from '@temporalio/worker';
import { z } from 'zod';
import { defineTool } from '../../activities';
import type { ConversationOptionsInput } from '../../client';
import {
  createAnthropic,
  createConversationWorker,
  type ConversationWorkerOptions,
  runWorker,
  type RunWorkerOptions,
} from '../../workers';
import {
  type ConversationTestEnvOptions,
  type DevServerOptions,
  type MessagesApiOptions,
  startConversationTestEnv,
} from '../../testing';

declare const connection: NativeConnection;

// ── defineTool: the handler's input is the schema's ─────────────────────────────────────────────────────────────────

const getTickerSymbol = defineTool({
  name: 'get_ticker_symbol',
  description: 'Gets the stock ticker symbol for a company name.',
  input: z.object({ company_name: z.string() }),
  run: async ({ company_name }) => (company_name === 'General Motors' ? 'GM' : 'UNKNOWN'),
});

defineTool({
  name: 'get_ticker_symbol',
  description: 'Gets the stock ticker symbol for a company name.',
  input: z.object({ company_name: z.string() }),
  // @ts-expect-error the handler reads a field the schema does not have
  run: async ({ company }) => company,
});

defineTool({
  name: 'get_ticker_symbol',
  description: 'Gets the stock ticker symbol for a company name.',
  input: z.object({ company_name: z.string() }),
  // @ts-expect-error the handler takes another input than the schema's
  run: async (input: { company: string }) => input.company,
});

defineTool({
  name: 'get_current_stock_price',
  description: 'Gets the current price of a stock.',
  input: z.object({ symbol: z.string() }),
  // @ts-expect-error the schema's string is not a number
  run: ({ symbol }) => symbol.toFixed(2),
});

defineTool({
  name: 'delete_file',
  description: 'Deletes a file.',
  input: z.object({ path: z.string() }),
  run: () => undefined,
  // @ts-expect-error the tool's option is requiresApproval (requireApproval is the MCP configuration's)
  requireApproval: true,
});

defineTool({
  name: 'slow_tool',
  description: 'Takes its time.',
  input: z.object({}),
  run: () => undefined,
  // @ts-expect-error a timeout is a Temporal duration string ('2 minutes'), not a number of seconds
  timeout: 120,
});

// @ts-expect-error a tool's input is a zod object, not a JSON Schema
defineTool({ name: 'raw', description: 'A JSON Schema input.', input: { type: 'object' }, run: () => undefined });

// ── the worker ───────────────────────────────────────────────────────────────────────────────────────────────────────

export const workerOptions: ConversationWorkerOptions = {
  connection,
  namespace: 'default',
  taskQueue: 'conversations',
  anthropic: createAnthropic({ ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY }),
  tools: [getTickerSymbol],
  modelPrices: { 'my-proxy-model': { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 } },
};

export const misspelledQueue: ConversationWorkerOptions = {
  connection,
  namespace: 'default',
  // @ts-expect-error the option is taskQueue
  taskqueue: 'conversations',
  anthropic: createAnthropic({}),
  tools: [],
};

export const toolNames: ConversationWorkerOptions = {
  ...workerOptions,
  // @ts-expect-error a worker runs tool definitions (defineTool), not tool names
  tools: ['get_ticker_symbol'],
};

export const pricesWithoutCache: ConversationWorkerOptions = {
  ...workerOptions,
  // @ts-expect-error a model's prices name every kind of token (cacheWrite and cacheRead too)
  modelPrices: { 'my-proxy-model': { input: 3, output: 15 } },
};

// @ts-expect-error a worker needs its Anthropic client
export const noAnthropic: ConversationWorkerOptions = { connection, namespace: 'default', taskQueue: 'q', tools: [] };

export async function startWorker(): Promise<void> {
  const worker = await createConversationWorker(workerOptions);
  await worker.run();
  await runWorker({ tools: [getTickerSymbol] });
  await runWorker({
    tools: [getTickerSymbol],
    mcpServers: { memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] } },
  });
}

export const checkOnly: RunWorkerOptions = {
  tools: [getTickerSymbol],
  // @ts-expect-error the option is checkOnly
  checkonly: true,
};

export const mcpArgs: RunWorkerOptions = {
  tools: [],
  // @ts-expect-error an MCP server's args are a list
  mcpServers: { memory: { command: 'npx', args: '-y @modelcontextprotocol/server-memory' } },
};

// ── a conversation's options ─────────────────────────────────────────────────────────────────────────────────────────

export const options: ConversationOptionsInput = {
  model: 'claude-opus-5-5',
  fallbackModels: ['claude-opus-5-5', 'claude-haiku-4-5'],
  system: 'You are a financial assistant. Answer with figures from the tools only.',
  tools: ['get_ticker_symbol', 'get_current_stock_price'],
  mcpServers: ['memory', { server: 'filesystem', tools: ['read_file', 'list_directory'] }],
  toolChoice: { type: 'tool', name: 'get_ticker_symbol' },
  maxTokensCap: 16_000,
  thinking: { type: 'adaptive', display: 'summarized' },
  effort: 'high',
  serverTools: { webSearch: { maxUses: 5 } },
  timeouts: { idle: '7 days' },
  contextManagement: {
    mode: 'compaction',
    compaction: { triggerTokens: 100_000 },
    clearToolUses: { excludeTools: ['get_current_stock_price'] },
  },
  output: { schema: { type: 'object', properties: { price: { type: 'number' } }, required: ['price'] } },
  prices: { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 },
  budget: { perTurn: { usd: 0.5 }, perConversation: { tokens: 2_000_000 } },
};

// @ts-expect-error the protocols are 'native' and 'legacy-xml'
export const wrongProtocol: ConversationOptionsInput = { protocol: 'xml' };

// @ts-expect-error the option is maxTokens
export const misspelledMaxTokens: ConversationOptionsInput = { maxToken: 4096 };

// @ts-expect-error the Messages API no longer takes a temperature
export const temperature: ConversationOptionsInput = { temperature: 0.2 };

export const misspelledLimit: ConversationOptionsInput = {
  // @ts-expect-error the limit is maxModelCallsPerTurn
  limits: { maxModelCalls: 10 },
};

export const secondsAsNumber: ConversationOptionsInput = {
  // @ts-expect-error a timeout is a duration string ('1 hour'), not a number
  timeouts: { idle: 3600 },
};

export const thinkingWithoutBudget: ConversationOptionsInput = {
  // @ts-expect-error manual thinking needs its budget_tokens
  thinking: { type: 'enabled' },
};

export const toolWithoutName: ConversationOptionsInput = {
  // @ts-expect-error a forced tool is named
  toolChoice: { type: 'tool' },
};

export const wrongContextMode: ConversationOptionsInput = {
  // @ts-expect-error the modes are 'off', 'clear-tool-uses', 'compaction' and 'both'
  contextManagement: { mode: 'compact' },
};

// ── the testing kit ──────────────────────────────────────────────────────────────────────────────────────────────────

export const messagesApi: MessagesApiOptions = { tokenDelayMs: 5, contextWindowTokens: 20_000 };
export const devServer: DevServerOptions = { port: 7233, uiPort: 8233, dbFile: 'temporal.db' };

export async function startTestEnv(): Promise<void> {
  const env = await startConversationTestEnv({ tools: [getTickerSymbol], messagesApi: { tokenDelayMs: 5 } });
  await env.close();
}

export const misspelledDelay: ConversationTestEnvOptions = {
  tools: [getTickerSymbol],
  // @ts-expect-error the option is tokenDelayMs
  messagesApi: { tokenDelay: 5 },
};

export const portAsText: ConversationTestEnvOptions = {
  tools: [getTickerSymbol],
  // @ts-expect-error a port is a number
  devServer: { port: '7233' },
};

export const relayAsText: ConversationTestEnvOptions = {
  tools: [getTickerSymbol],
  // @ts-expect-error liveRelay is true, false, or where the relay listens
  liveRelay: 'on',
};
