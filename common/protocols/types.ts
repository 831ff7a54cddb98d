// The contract between the conversation loop and a tool-use protocol. A protocol is one pure unit: how tools are
// put into a request, how a reply is read (what enters the transcript, which tools to call), how a call's input
// becomes what the tool's schema checks, and how outcomes go back to the model. Durability, retries and errors live
// in the loop and the activities and are shared by every protocol.
import type {
  ImageBlockParam,
  Message,
  MessageParam,
  StopReason,
  TextBlockParam,
  Tool,
  ToolChoice,
} from '@anthropic-ai/sdk/resources/messages';

export type ProtocolName = 'native' | 'legacy-xml';

/** A tool as the model is told about it; both protocols render requests from this. */
export interface ToolDescription {
  name: string;
  description: string;
  input_schema: Tool.InputSchema;
  /** What the tool returns and which errors it raises (the legacy prompt has a place for both). */
  returns?: string;
  raises?: string[];
}

/** The part of a model reply a protocol reads. */
export type ModelReply = Pick<Message, 'content' | 'stop_reason'> & { stop_sequence?: string | null };

/** One tool call the model asked for. */
export interface ToolCall {
  /**
   * The `tool_use` id (native: the model's when the API would take it back, else the orchestrator's), or an id the
   * protocol makes up (legacy); unique within the transcript.
   */
  id: string;
  /**
   * The orchestrator's own name for the call, `<model call number>-<position among the reply's calls>`: unique in the
   * conversation whatever the model wrote. Activity ids and idempotency keys are made of it.
   */
  ref: string;
  name: string;
  /** The arguments as the model wrote them; `decodeToolInput` turns them into what the tool's schema checks. */
  input: Record<string, unknown>;
  /** Set when the call could not be read at all; it goes back to the model as an error, it is never run. */
  malformed?: string;
}

/** A block of a tool's result: MCP tools may return images besides text. */
export type ToolResultBlock = TextBlockParam | ImageBlockParam;

/** What running (or refusing to run) one tool call produced. */
export interface ToolOutcome {
  callId: string;
  name: string;
  isError: boolean;
  /** Text, or blocks in the tool's order (the legacy protocol describes images in words). */
  content: string | ToolResultBlock[];
}

export interface ReplyReading {
  /** The assistant message as it enters the transcript. */
  assistant: MessageParam;
  /** The calls to run, in the model's order. Empty when the model is done (or only talking). */
  toolCalls: ToolCall[];
  /** The text a person should see as the answer (legacy: the `<answer>` content when present). */
  text: string;
  /** The reply's stop reason when it is one the API defines; null otherwise (a proxy can send anything). */
  stopReason: StopReason | null;
}

/** The protocol's part of a Messages API request: where the tools go, and how the model is told to stop. */
export interface ToolsInRequest {
  tools?: Tool[];
  tool_choice?: ToolChoice;
  /** Put before the conversation's own system prompt. */
  systemPrefix?: string;
  stop_sequences?: string[];
}

export interface ToolRequestOptions {
  toolChoice?: ToolChoice;
  disableParallelToolUse?: boolean;
  /** Mark the end of the tools as a prompt-cache breakpoint. */
  promptCaching: boolean;
}

export interface ReadOptions {
  /**
   * The call offered the API's server tools: their blocks (`server_tool_use`, `web_search_tool_result`, …) stay in
   * the assistant message, in place (native protocol). Otherwise they can only come from a proxy and are left out.
   */
  serverTools?: boolean;
}

export type DecodedInput = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

export interface Protocol {
  readonly name: ProtocolName;
  /** The tools (and tool choice) as this protocol puts them into a request; nothing when there are no tools. */
  renderTools(tools: readonly ToolDescription[], options: ToolRequestOptions): ToolsInRequest;
  /**
   * `callNumber` counts the conversation's model calls (this one included): calls' `ref`s and the ids the
   * orchestrator makes up come from it. `takenIds`: the tool_use ids the transcript holds already, which the reply's
   * own may not repeat. The assistant message is always one the API accepts back.
   */
  readReply(reply: ModelReply, callNumber: number, takenIds?: ReadonlySet<string>, options?: ReadOptions): ReplyReading;
  /** A call's input as the tool's JSON Schema expects it (the legacy protocol's values arrive as text). */
  decodeToolInput(input: Record<string, unknown>, schema: ToolDescription['input_schema']): DecodedInput;
  /** One user message answering every call of the last reply, in the model's order. */
  renderResults(outcomes: ToolOutcome[]): MessageParam;
}
