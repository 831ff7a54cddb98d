// A model's tool_use blocks as the orchestrator takes them. What the model (or a proxy, or a fallback model) sends is
// input like any other: an id may repeat, be 1,500 characters long or hold characters the API refuses, an input may
// be a string or nested 10,000 deep. Each block is made into one the API accepts when it is sent back (the Messages
// API wants ids matching ^[a-zA-Z0-9_-]+$, unique in the request, an object as input), and into a call the loop can
// run or answer with an error. Deterministic and bounded (no regex over model text, no recursion deeper than the
// depth limit): the workflow and the worker's transcript cache read the same reply the same way.
import type { ToolUseBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { ToolCall } from './types';

/** Longer ids are replaced: nothing the API needs, and ids travel in approvals, events and logs. */
export const MAX_TOOL_USE_ID_CHARS = 64;
/** A tool input nested deeper than this is not run: no tool's schema goes that deep, and walking it costs stack. */
export const MAX_TOOL_INPUT_DEPTH = 64;
/** The API's rule for tool names; a name that breaks it cannot be one of the tools offered. */
const MAX_TOOL_NAME_CHARS = 64;
/** What a call with an unusable name is called in the transcript. */
export const INVALID_TOOL_NAME = 'invalid_tool_name';

function isIdChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 /* _ */ || c === 45; /* - */
}

/** `^[a-zA-Z0-9_-]{1,max}$`, checked without a regex and without reading past `max`. */
function isApiName(value: unknown, max: number): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > max) return false;
  for (let i = 0; i < value.length; i++) if (!isIdChar(value.charCodeAt(i))) return false;
  return true;
}

export function isObjectInput(input: unknown): input is Record<string, unknown> {
  return typeof input === 'object' && input !== null && !Array.isArray(input);
}

/** Whether arrays and objects nest more than `limit` levels (the input object itself is level 1). Stops at `limit`. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  let level: unknown[] = [value];
  for (let depth = 0; level.length > 0; depth++) {
    const next: unknown[] = [];
    for (const item of level) {
      if (typeof item !== 'object' || item === null) continue;
      if (depth >= limit) return true;
      for (const child of Array.isArray(item) ? item : Object.values(item)) {
        if (typeof child === 'object' && child !== null) next.push(child);
      }
    }
    level = next;
  }
  return false;
}

/**
 * The input as deep as `limit + 1` levels, deeper arrays and objects replaced by null: still deeper than the limit
 * (so the call is refused as nested too deep), but small enough to be recorded. The worker applies it before its
 * result is serialised (JSON.stringify itself overflows the stack a few thousand levels down). Inputs within the
 * limit come back as they are.
 */
export function cutDeepInput(input: unknown, limit = MAX_TOOL_INPUT_DEPTH): unknown {
  if (!nestsDeeperThan(input, limit)) return input;
  const copy = (value: unknown, depth: number): unknown => {
    if (typeof value !== 'object' || value === null) return value;
    if (depth > limit + 1) return null;
    if (Array.isArray(value)) return value.map((item) => copy(item, depth + 1));
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, copy(item, depth + 1)]));
  };
  return copy(input, 1);
}

/** The tool_use ids of a transcript's assistant messages: a reply may not reuse them. */
export function toolUseIdsOf(messages: readonly { role: string; content: unknown }[]): Set<string> {
  const ids = new Set<string>();
  for (const message of messages) {
    if (message.role !== 'assistant' || !Array.isArray(message.content)) continue;
    for (const block of message.content as unknown[]) {
      const { type, id } = (block ?? {}) as { type?: unknown; id?: unknown };
      if (type === 'tool_use' && typeof id === 'string') ids.add(id);
    }
  }
  return ids;
}

/** What one tool_use block became: the block for the transcript and the call to run (or to answer with an error). */
export interface ReadToolUse {
  block: ToolUseBlockParam;
  call: ToolCall;
}

/**
 * One tool_use block, the `ordinal`-th of the reply of model call `callNumber`. `taken` holds the ids already used in
 * the transcript and earlier in this reply; the block's id is added to it. A valid, unused id is kept (the model reads
 * its own ids); any other gets the orchestrator's, `toolu_orch_<call>_<ordinal>` (a suffix if even that is taken).
 */
export function readToolUse(raw: unknown, callNumber: number, ordinal: number, taken: Set<string>): ReadToolUse {
  const {
    id: rawId,
    name: rawName,
    input: rawInput,
  } = (raw ?? {}) as { id?: unknown; name?: unknown; input?: unknown };
  let id: string;
  if (isApiName(rawId, MAX_TOOL_USE_ID_CHARS) && !taken.has(rawId)) id = rawId;
  else {
    id = `toolu_orch_${callNumber}_${ordinal}`;
    for (let n = 1; taken.has(id); n++) id = `toolu_orch_${callNumber}_${ordinal}_${n}`;
  }
  taken.add(id);
  const validName = isApiName(rawName, MAX_TOOL_NAME_CHARS);
  const name = validName ? rawName : INVALID_TOOL_NAME;
  const problem = !validName
    ? `the tool name is not one a tool can have (1 to ${MAX_TOOL_NAME_CHARS} letters, digits, "_" or "-")`
    : !isObjectInput(rawInput)
      ? `the input of ${name} must be a JSON object`
      : nestsDeeperThan(rawInput, MAX_TOOL_INPUT_DEPTH)
        ? `the input of ${name} nests deeper than ${MAX_TOOL_INPUT_DEPTH} levels`
        : undefined;
  // The transcript keeps the model's input only when it is one the API takes back and the loop can walk.
  const input = problem === undefined ? (rawInput as Record<string, unknown>) : {};
  return {
    block: { type: 'tool_use', id, name, input },
    call: { id, ref: `${callNumber}-${ordinal}`, name, input, ...(problem !== undefined && { malformed: problem }) },
  };
}
