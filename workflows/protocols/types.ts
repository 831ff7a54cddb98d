// The contract between the conversation loop and a tool-use protocol. A protocol is a pure translator:
// model reply → (what enters the transcript, which tools to call); tool outcomes → the next user message.
// Durability, retries and errors live in the loop and the activities and are shared by every protocol.
import type { ContentBlock, Message, MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';

export type ProtocolName = 'native' | 'legacy-xml';

/** A tool as the model is told about it; both protocols render requests from this. */
export interface ToolDescription {
  name: string;
  description: string;
  input_schema: Tool.InputSchema;
}

/** The part of a model reply a protocol reads. */
export type ModelReply = Pick<Message, 'content' | 'stop_reason' | 'stop_sequence'>;

/** One tool call the model asked for. */
export interface ToolCall {
  /** The `tool_use` id (native), or an id the protocol makes up, unique within the conversation (legacy). */
  id: string;
  name: string;
  /**
   * The arguments. `json`: an object as the model wrote it (native). `xml-text`: each parameter's raw text,
   * still to be coerced to the declared JSON Schema types before validation (legacy).
   */
  input: Record<string, unknown>;
  encoding: 'json' | 'xml-text';
  /** Set when the call could not be read at all; it goes back to the model as an error, it is never run. */
  malformed?: string;
}

/** What running (or refusing to run) one tool call produced. */
export interface ToolOutcome {
  callId: string;
  name: string;
  isError: boolean;
  content: string;
}

export interface ReplyReading {
  /** The assistant message as it enters the transcript. */
  assistant: MessageParam;
  /** The calls to run, in the model's order. Empty when the model is done (or only talking). */
  toolCalls: ToolCall[];
  /** The text a person should see as the answer (legacy: the `<answer>` content when present). */
  text: string;
}

export interface Protocol {
  readonly name: ProtocolName;
  /** `turn` is the number of model replies so far in the conversation; protocols use it to make unique ids. */
  readReply(reply: ModelReply, turn: number): ReplyReading;
  /** One user message answering every call of the last reply, in the model's order. */
  renderResults(outcomes: ToolOutcome[]): MessageParam;
}

export type { ContentBlock, MessageParam };
