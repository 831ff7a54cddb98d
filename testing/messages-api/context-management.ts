// Context management, as the Messages API documents it (beta headers `compact-2026-01-12` and
// `context-management-2025-06-27`):
//
// - `context_management.edits` is validated like the API does it (400 `invalid_request_error`, pydantic-style paths);
//   each edit needs its beta header.
// - `compact_20260112`: when the prompt reaches the trigger (default 150,000 input tokens, minimum 50,000) the reply
//   opens with a `compaction` block: a summary of the conversation so far (compaction-summary.ts), an opaque
//   `encrypted_content` and a `signature`. The model answers from the compacted context; usage reports the compaction
//   as an iteration of its own (not in the top-level figures). With `pause_after_compaction` the reply is the block
//   alone, `stop_reason: 'compaction'`.
// - A `compaction` block sent back is honoured: everything before the message it opens is dropped (the system prompt
//   stays). It must open an assistant message (else 400 `compaction_block_misplaced`), only one may hold a summary
//   (`compaction_block_ambiguous`), its signature must verify (`compaction_signature_invalid`) and match its content
//   (`compaction_content_mismatch`), and its content may be null (a failed compaction: a no-op) but not empty.
// - `clear_tool_uses_20250919`: once the prompt exceeds the trigger (default 100,000 input tokens, or a number of tool
//   uses), the oldest tool results — all but the last `keep` (default 3) tool uses, minus `exclude_tools` — are
//   replaced by a placeholder before the model reads them (their inputs too with `clear_tool_inputs`), unless less
//   than `clear_at_least` tokens would go. The reply reports `context_management.applied_edits`.
import { createHash, createHmac } from 'node:crypto';
import { digest, requestInSummary } from './compaction-summary';
import { firstUserText } from './demo-model';
import { countInputTokens } from './prompt-cache';
import { estimateTokens } from './tokens';

type Json = Record<string, unknown>;

export const COMPACTION_BETA = 'compact-2026-01-12';
export const CONTEXT_EDITING_BETA = 'context-management-2025-06-27';
export const MIN_COMPACTION_TRIGGER = 50_000;
export const DEFAULT_COMPACTION_TRIGGER = 150_000;
export const DEFAULT_CLEAR_TRIGGER = 100_000;
export const DEFAULT_KEEP_TOOL_USES = 3;
/** What a cleared tool result says (the API's own wording is not documented; this one says what happened). */
export const CLEARED_TOOL_RESULT = '[tool result cleared to save context]';

const EDIT_TYPES = ['clear_tool_uses_20250919', 'clear_thinking_20251015', 'compact_20260112'] as const;
/** The local server signs its compaction blocks with this; any server process verifies any other's. */
const SIGNING_KEY = 'local-messages-api/compaction';

export interface CompactEdit {
  trigger: number;
  pause: boolean;
  instructions?: string;
}

export interface ClearEdit {
  trigger: { type: 'input_tokens' | 'tool_uses'; value: number };
  keep: number;
  clearAtLeast?: number;
  excludeTools: string[];
  clearInputs: boolean | string[];
}

export interface ContextManagement {
  compact?: CompactEdit;
  clear?: ClearEdit;
}

export type ContextCheck = { ok: true; management?: ContextManagement } | { ok: false; message: string; code?: string };

class Invalid extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

function fail(message: string, code?: string): never {
  throw new Invalid(message, code);
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function messagesOf(body: Json): Json[] {
  return Array.isArray(body['messages']) ? (body['messages'] as Json[]) : [];
}

function blocksOf(message: Json | undefined): Json[] {
  return message && Array.isArray(message['content']) ? (message['content'] as Json[]) : [];
}

/** The beta names of an `anthropic-beta` header (comma-separated). */
export function betasOf(header: string | undefined): Set<string> {
  return new Set(
    (header ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean),
  );
}

/** Validates `context_management` and any compaction blocks of the request; the edits it asks for. */
export function checkContextManagement(body: Json, betas: Set<string>): ContextCheck {
  try {
    checkCompactionBlocks(body, betas);
    if (!('context_management' in body) || body['context_management'] === null) return { ok: true };
    return { ok: true, management: readEdits(body['context_management'], betas) };
  } catch (err) {
    if (err instanceof Invalid) return { ok: false, message: err.message, ...(err.code && { code: err.code }) };
    throw err;
  }
}

function noExtra(value: Json, allowed: readonly string[], path: string): void {
  for (const key of Object.keys(value))
    if (!allowed.includes(key)) fail(`${path}.${key}: Extra inputs are not permitted`);
}

function integer(value: unknown, path: string, min: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) fail(`${path}: Input should be a valid integer`);
  if (value < min) fail(`${path}: Input should be greater than or equal to ${min}`);
  return value;
}

/** `{type, value}` with one of `types`. */
function counter<T extends string>(value: unknown, path: string, types: readonly T[], min: number) {
  if (!isObject(value)) fail(`${path}: Input should be a valid dictionary`);
  noExtra(value, ['type', 'value'], path);
  const type = value['type'];
  if (!types.includes(type as T)) fail(`${path}.type: Input should be ${types.map((t) => `'${t}'`).join(' or ')}`);
  return { type: type as T, value: integer(value['value'], `${path}.value`, min) };
}

function readEdits(config: unknown, betas: Set<string>): ContextManagement {
  if (!isObject(config)) fail('context_management: Input should be a valid dictionary');
  noExtra(config, ['edits'], 'context_management');
  const edits = config['edits'] ?? [];
  if (!Array.isArray(edits)) fail('context_management.edits: Input should be a valid list');
  const management: ContextManagement = {};
  const seen = new Set<string>();
  edits.forEach((edit, i) => {
    const path = `context_management.edits.${i}`;
    if (!isObject(edit)) fail(`${path}: Input should be a valid dictionary`);
    const type = edit['type'];
    if (!(EDIT_TYPES as readonly unknown[]).includes(type)) {
      fail(
        `${path}: Input tag ${typeof type === 'string' ? `'${type}'` : JSON.stringify(type ?? null)} found using ` +
          `'type' does not match any of the expected tags: ${EDIT_TYPES.map((t) => `'${t}'`).join(', ')}`,
      );
    }
    if (seen.has(type as string)) fail(`context_management.edits: ${String(type)} appears more than once`);
    seen.add(type as string);
    const at = `${path}.${String(type)}`;
    if (type === 'compact_20260112') {
      needBeta(betas, COMPACTION_BETA, path, 'compact_20260112');
      management.compact = readCompact(edit, at);
    } else if (type === 'clear_tool_uses_20250919') {
      needBeta(betas, CONTEXT_EDITING_BETA, path, 'clear_tool_uses_20250919');
      management.clear = readClear(edit, at);
    } else {
      needBeta(betas, CONTEXT_EDITING_BETA, path, 'clear_thinking_20251015');
      noExtra(edit, ['type', 'keep'], at); // no thinking here: nothing to clear
    }
  });
  return management;
}

function needBeta(betas: Set<string>, beta: string, path: string, what: string): void {
  if (!betas.has(beta)) fail(`${path}: ${what} requires the beta header 'anthropic-beta: ${beta}'`);
}

function readCompact(edit: Json, path: string): CompactEdit {
  noExtra(edit, ['type', 'trigger', 'pause_after_compaction', 'instructions'], path);
  const trigger =
    edit['trigger'] == null
      ? DEFAULT_COMPACTION_TRIGGER
      : counter(edit['trigger'], `${path}.trigger`, ['input_tokens'], MIN_COMPACTION_TRIGGER).value;
  const pause = edit['pause_after_compaction'];
  if (pause !== undefined && typeof pause !== 'boolean') {
    fail(`${path}.pause_after_compaction: Input should be a valid boolean`);
  }
  const instructions = edit['instructions'];
  if (instructions != null && typeof instructions !== 'string')
    fail(`${path}.instructions: Input should be a valid string`);
  return { trigger, pause: pause === true, ...(typeof instructions === 'string' && { instructions }) };
}

function readClear(edit: Json, path: string): ClearEdit {
  noExtra(edit, ['type', 'trigger', 'keep', 'clear_at_least', 'exclude_tools', 'clear_tool_inputs'], path);
  const trigger =
    edit['trigger'] === undefined
      ? { type: 'input_tokens' as const, value: DEFAULT_CLEAR_TRIGGER }
      : counter(edit['trigger'], `${path}.trigger`, ['input_tokens', 'tool_uses'], 1);
  const keep =
    edit['keep'] === undefined ? DEFAULT_KEEP_TOOL_USES : counter(edit['keep'], `${path}.keep`, ['tool_uses'], 0).value;
  const clearAtLeast =
    edit['clear_at_least'] == null
      ? undefined
      : counter(edit['clear_at_least'], `${path}.clear_at_least`, ['input_tokens'], 0).value;
  const exclude = edit['exclude_tools'] ?? [];
  if (!Array.isArray(exclude) || exclude.some((name) => typeof name !== 'string')) {
    fail(`${path}.exclude_tools: Input should be a valid list of strings`);
  }
  const inputs = edit['clear_tool_inputs'] ?? false;
  const validInputs =
    typeof inputs === 'boolean' || (Array.isArray(inputs) && inputs.every((name) => typeof name === 'string'));
  if (!validInputs) fail(`${path}.clear_tool_inputs: Input should be a valid boolean or a list of strings`);
  return {
    trigger,
    keep,
    ...(clearAtLeast !== undefined && { clearAtLeast }),
    excludeTools: exclude as string[],
    clearInputs: inputs as boolean | string[],
  };
}

// ── compaction blocks ─────────────────────────────────────────────────────────────────────────────

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function mac(contentHash: string, encrypted: string): string {
  return createHmac('sha256', SIGNING_KEY).update(`${contentHash}\n${encrypted}`).digest('hex');
}

/** `lmsig1.<sha256 of the content>.<hmac over that hash and encrypted_content>` */
function sign(content: string, encrypted: string): string {
  const hash = sha256(content);
  return `lmsig1.${hash}.${mac(hash, encrypted)}`;
}

function checkCompactionBlocks(body: Json, betas: Set<string>): void {
  let withSummary = 0;
  messagesOf(body).forEach((message, i) => {
    blocksOf(message).forEach((block, j) => {
      if (!isObject(block) || block['type'] !== 'compaction') return;
      const path = `messages.${i}.content.${j}`;
      if (!betas.has(COMPACTION_BETA))
        fail(`${path}: compaction blocks require the beta header 'anthropic-beta: ${COMPACTION_BETA}'`);
      if (message['role'] !== 'assistant' || j !== 0) {
        fail(
          `${path}: a compaction block must be the first block of an assistant message`,
          'compaction_block_misplaced',
        );
      }
      noExtra(
        block,
        ['type', 'content', 'encrypted_content', 'signature', 'cache_control', 'tool_changes'],
        `${path}.compaction`,
      );
      const content = block['content'];
      if (content != null && typeof content !== 'string')
        fail(`${path}.compaction.content: Input should be a valid string`);
      if (content === '') fail(`${path}.compaction.content: String should have at least 1 character`);
      const encrypted = block['encrypted_content'];
      if (encrypted != null && typeof encrypted !== 'string') {
        fail(`${path}.compaction.encrypted_content: Input should be a valid string`);
      }
      if (typeof content !== 'string') return; // a failed compaction: a no-op
      withSummary++;
      const signature = block['signature'];
      if (signature == null) return;
      const [version, hash, tag] = typeof signature === 'string' ? signature.split('.') : [];
      if (version !== 'lmsig1' || !hash || tag !== mac(hash, typeof encrypted === 'string' ? encrypted : '')) {
        fail(`${path}: the compaction block's signature does not verify`, 'compaction_signature_invalid');
      }
      if (hash !== sha256(content)) {
        fail(
          `${path}: the compaction block's content differs from the one it was returned with`,
          'compaction_content_mismatch',
        );
      }
    });
  });
  if (withSummary > 1) {
    fail(
      'messages: more than one compaction block holds a summary; send only the block the conversation returned last',
      'compaction_block_ambiguous',
    );
  }
}

function opensWithSummary(message: Json | undefined): boolean {
  const first = blocksOf(message)[0];
  return isObject(first) && first['type'] === 'compaction' && typeof first['content'] === 'string';
}

// ── what the model reads ──────────────────────────────────────────────────────────────────────────

export interface AppliedEdit {
  type: 'clear_tool_uses_20250919';
  cleared_tool_uses: number;
  cleared_input_tokens: number;
}

export interface PreparedContext {
  /** The request as the model reads it: from the last compaction on, old tool results cleared. */
  body: Json;
  /** Its input tokens. */
  tokens: number;
  /** Its input tokens before anything was cleared. */
  originalTokens: number;
  appliedEdits: AppliedEdit[];
}

export function prepareContext(body: Json, management: ContextManagement | undefined): PreparedContext {
  const messages = messagesOf(body);
  let from = -1;
  for (let i = messages.length - 1; i >= 0 && from < 0; i--) if (opensWithSummary(messages[i])) from = i;
  let prepared: Json = from > 0 ? { ...body, messages: messages.slice(from) } : body;
  const originalTokens = countInputTokens(prepared);
  const appliedEdits: AppliedEdit[] = [];
  if (management?.clear) {
    const cleared = clearToolUses(prepared, originalTokens, management.clear);
    if (cleared) {
      prepared = cleared.body;
      appliedEdits.push(cleared.edit);
    }
  }
  const tokens = appliedEdits.length > 0 ? countInputTokens(prepared) : originalTokens;
  return { body: prepared, tokens, originalTokens, appliedEdits };
}

function clearToolUses(body: Json, tokens: number, edit: ClearEdit): { body: Json; edit: AppliedEdit } | undefined {
  const messages = messagesOf(body);
  const uses: Array<{ message: number; block: number; id: string; name: string }> = [];
  messages.forEach((message, i) => {
    if (message['role'] !== 'assistant') return;
    blocksOf(message).forEach((block, j) => {
      if (isObject(block) && block['type'] === 'tool_use') {
        uses.push({ message: i, block: j, id: String(block['id']), name: String(block['name']) });
      }
    });
  });
  const triggered =
    edit.trigger.type === 'input_tokens' ? tokens > edit.trigger.value : uses.length > edit.trigger.value;
  if (!triggered) return undefined;
  const clearing = uses
    .slice(0, Math.max(0, uses.length - edit.keep))
    .filter((u) => !edit.excludeTools.includes(u.name));
  const clearInput = (name: string) =>
    edit.clearInputs === true || (Array.isArray(edit.clearInputs) && edit.clearInputs.includes(name));

  const copy: Json[] = messages.map((message) => ({
    ...message,
    content: Array.isArray(message['content']) ? [...(message['content'] as Json[])] : message['content'],
  }));
  let clearedTokens = 0;
  let clearedUses = 0;
  for (const use of clearing) {
    let cleared = false;
    const results = copy[use.message + 1];
    const blocks = blocksOf(results);
    blocks.forEach((block, k) => {
      if (!isObject(block) || block['type'] !== 'tool_result' || block['tool_use_id'] !== use.id) return;
      if (block['content'] === CLEARED_TOOL_RESULT) return;
      clearedTokens += estimateTokens(JSON.stringify(block['content'] ?? '')) - estimateTokens(CLEARED_TOOL_RESULT);
      blocks[k] = { ...block, content: CLEARED_TOOL_RESULT };
      cleared = true;
    });
    if (clearInput(use.name)) {
      const call = blocksOf(copy[use.message])[use.block]!;
      if (Object.keys((call['input'] as Json | undefined) ?? {}).length > 0) {
        clearedTokens += estimateTokens(JSON.stringify(call['input']));
        blocksOf(copy[use.message])[use.block] = { ...call, input: {} };
        cleared = true;
      }
    }
    if (cleared) clearedUses++;
  }
  clearedTokens = Math.max(0, clearedTokens);
  if (clearedUses === 0 || (edit.clearAtLeast !== undefined && clearedTokens < edit.clearAtLeast)) return undefined;
  return {
    body: { ...body, messages: copy },
    edit: { type: 'clear_tool_uses_20250919', cleared_tool_uses: clearedUses, cleared_input_tokens: clearedTokens },
  };
}

// ── compacting ────────────────────────────────────────────────────────────────────────────────────

export interface Compaction {
  block: { type: 'compaction'; content: string; encrypted_content: string; signature: string };
  /** What the compaction read, and wrote. */
  inputTokens: number;
  outputTokens: number;
  /** The request as the model reads it after compacting: system, tools and the summary. */
  compactedBody: Json;
  pause: boolean;
}

/** The compaction of a prepared request, when its edit is there and the prompt reached the trigger. */
export function compactIfDue(
  prepared: PreparedContext,
  management: ContextManagement | undefined,
): Compaction | undefined {
  const edit = management?.compact;
  if (!edit || prepared.tokens < edit.trigger) return undefined;
  const messages = messagesOf(prepared.body);
  const request = firstUserText(prepared.body);
  const content = digest(messages, requestInSummary(request) ?? request, edit.instructions);
  const encrypted = Buffer.from(JSON.stringify({ v: 1, messages: messages.length, tokens: prepared.tokens })).toString(
    'base64',
  );
  const block = {
    type: 'compaction' as const,
    content,
    encrypted_content: encrypted,
    signature: sign(content, encrypted),
  };
  return {
    block,
    inputTokens: prepared.tokens,
    outputTokens: estimateTokens(content),
    compactedBody: { ...prepared.body, messages: [{ role: 'assistant', content: [{ type: 'compaction', content }] }] },
    pause: edit.pause,
  };
}
