// The baseline: the same tool-use chain as a plain in-process loop, no Temporal. The same SDK client settings as
// the worker's (maxRetries 0, streaming, finalMessage), the same request bytes (buildModelRequest, so the server does
// the same prompt-cache work), the same transcript translation (the native protocol), and the same tools: each
// tool_use is zod-parsed and its handler runs right here.
import Anthropic from '@anthropic-ai/sdk';
import type { Message, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { buildModelRequest } from '../../activities/model-request';
import { describeTool, type ToolDefinition } from '../../activities/tool-definition';
import { demoTools } from '../../testing/demo-tools';
import type { ModelRequestOptions } from '../../common/activity-contracts';
import { protocolFor } from '../../common/protocols';
import type { ToolOutcome } from '../../common/protocols/types';

interface LoopOptions {
  baseURL: string;
  request: Omit<ModelRequestOptions, 'protocol'>;
}

export class InProcessLoop {
  private readonly anthropic: Anthropic;
  private readonly tools: Map<string, ToolDefinition>;

  constructor(
    private readonly options: LoopOptions,
    tools: readonly ToolDefinition[] = demoTools,
  ) {
    this.anthropic = new Anthropic({ baseURL: options.baseURL, apiKey: 'bench-in-process', maxRetries: 0 });
    this.tools = new Map(tools.map((tool) => [tool.name, tool]));
  }

  /** Runs one user message to the end of its tool chain. */
  async run(
    firstMessage: string,
    maxModelCalls = 1000,
  ): Promise<{ text: string; modelCalls: number; toolCalls: number }> {
    const protocol = protocolFor('native');
    const request: ModelRequestOptions = { ...this.options.request, protocol: 'native' };
    const offered = request.tools.map((name) => {
      const tool = this.tools.get(name);
      if (!tool) throw new Error(`Unknown tool ${name}`);
      return describeTool(tool);
    });
    const transcript: MessageParam[] = [{ role: 'user', content: firstMessage }];
    let toolCalls = 0;
    for (let call = 1; call <= maxModelCalls; call++) {
      const message: Message = await this.anthropic.messages
        .stream(buildModelRequest(request, transcript, offered))
        .finalMessage();
      const reading = protocol.readReply(message, call);
      transcript.push(reading.assistant);
      if (reading.toolCalls.length === 0 || message.stop_reason !== 'tool_use')
        return { text: reading.text, modelCalls: call, toolCalls };
      const outcomes: ToolOutcome[] = [];
      for (const toolCall of reading.toolCalls) {
        toolCalls++;
        outcomes.push(await this.runTool(toolCall.id, toolCall.name, toolCall.input));
      }
      transcript.push(protocol.renderResults(outcomes));
    }
    throw new Error(`No final answer after ${maxModelCalls} model calls`);
  }

  private async runTool(callId: string, name: string, input: Record<string, unknown>): Promise<ToolOutcome> {
    const fail = (content: string): ToolOutcome => ({ callId, name, isError: true, content });
    const tool = this.tools.get(name);
    if (!tool) return fail(`Unknown tool "${name}".`);
    const parsed = tool.input.safeParse(input);
    if (!parsed.success) return fail(`InvalidInput: ${parsed.error.message}`);
    try {
      const value = await tool.run(parsed.data, {
        idempotencyKey: callId,
        attempt: 1,
        signal: new AbortController().signal,
        heartbeat: () => {},
      });
      const content = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
      return { callId, name, isError: false, content };
    } catch (err) {
      return fail(`${(err as Error).name}: ${(err as Error).message}`);
    }
  }
}
