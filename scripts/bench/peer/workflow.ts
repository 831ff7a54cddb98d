// The peer's conversation: the Vercel AI SDK's tool loop (generateText) inside a Temporal workflow, the way
// @temporalio/ai-sdk's own tests and samples write it: the model through `temporalProvider` (each call an
// `invokeModel` activity), each tool an AI SDK `tool` whose `execute` runs an activity, `stopWhen` a step count.
// The bench starts it and waits for its result; the chain it plays is scripted on the local Messages API server.
import { generateText, isStepCount, tool } from 'ai';
import { z } from 'zod';
import { proxyActivities } from '@temporalio/workflow';
import { temporalProvider } from '@temporalio/ai-sdk/workflow';
import type * as tools from './tools';

export interface PeerChainInput {
  prompt: string;
  /** The most model calls the loop may make (the chain's steps + 1 for the final answer). */
  maxModelCalls: number;
  model: string;
  maxOutputTokens: number;
}

const { getWeather, getTickerSymbol } = proxyActivities<typeof tools>({ startToCloseTimeout: '1 minute' });

export async function peerChain(input: PeerChainInput): Promise<{ text: string; toolCalls: number }> {
  const result = await generateText({
    model: temporalProvider.languageModel(input.model),
    prompt: input.prompt,
    maxOutputTokens: input.maxOutputTokens,
    tools: {
      get_weather: tool({
        description: 'Gets the current weather for a given location.',
        inputSchema: z.object({
          location: z.string().min(1).describe('The city and state, e.g. San Francisco, CA'),
          unit: z
            .enum(['celsius', 'fahrenheit'])
            .optional()
            .describe("The unit of temperature, 'celsius' or 'fahrenheit'"),
        }),
        execute: (args) => getWeather(args),
      }),
      get_ticker_symbol: tool({
        description: 'Gets the stock ticker symbol for a company searched by name.',
        inputSchema: z.object({ company_name: z.string().min(1).describe('The name of the company.') }),
        execute: (args) => getTickerSymbol(args),
      }),
    },
    stopWhen: isStepCount(input.maxModelCalls),
  });
  return { text: result.text, toolCalls: result.steps.reduce((sum, step) => sum + step.toolCalls.length, 0) };
}
