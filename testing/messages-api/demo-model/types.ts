// The demo model's shapes: the request as it reads it, and the reply it gives (before ids and usage are added).
import type { StopReason } from '../types';

export type Json = Record<string, unknown>;

export type DemoBlock =
  | { type: 'text'; text: string }
  /** `partialJson`: the call was cut off by max_tokens; only this prefix of its input JSON was generated. */
  | { type: 'tool_use'; name: string; input: Json; partialJson?: string };

export interface DemoReply {
  content: DemoBlock[];
  stop_reason: StopReason;
  stop_sequence: string | null;
}

export interface Message {
  role: 'user' | 'assistant';
  content: string | Json[];
}
