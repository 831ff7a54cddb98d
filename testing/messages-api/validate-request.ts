// Validation of a Messages API request body, as the real API does it before any model runs. A failure is answered
// 400 `invalid_request_error` with `message`. Wording follows what the API answers where it is known (from its error
// reports: "messages: roles must alternate…", "tools.3.custom.name: String should match pattern…", "`tool_use` ids
// were found without `tool_result` blocks immediately after…", "`tool_use` ids must be unique", "tool_use.id: String
// should match pattern '^[a-zA-Z0-9_-]+$'", "text content blocks must be non-empty", "A maximum of 4 blocks with
// cache_control…", "`web_search` tool use with id `srvtoolu_…` was found without a corresponding
// `web_search_tool_result` block", "unexpected `tool_use_id` found in `advisor_tool_result` blocks: … Each
// `advisor_tool_result` block must have a corresponding `server_tool_use` block before it");
// paths like `messages.1.content.0` point at the offending element.
//
// Deliberately stricter than today's API in one place: two consecutive messages with the same role are an error
// (the API would merge them), because an orchestrator that produces them has a bug worth seeing.

import { SERVER_TOOL_RESULT_TYPES } from '../../common/server-tools';

export type ValidationResult = { ok: true } | { ok: false; message: string };

export interface ValidateOptions {
  /** `/v1/messages/count_tokens`: no `max_tokens`, no sampling parameters. */
  countTokens?: boolean;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const TOOL_USE_ID = /^[a-zA-Z0-9_-]+$/;
const TOOL_CHOICE_TYPES = ['auto', 'any', 'tool', 'none'] as const;
const MAX_CACHE_BREAKPOINTS = 4;

/** The output-token cap per model family, checked against `max_tokens`. */
export function maxOutputTokens(model: string): number {
  if (model.startsWith('claude-opus-4')) return 32000;
  if (model.startsWith('claude-sonnet-4') || model.startsWith('claude-3-7-sonnet')) return 64000;
  if (model.startsWith('claude-3-5-haiku')) return 8192;
  if (model.startsWith('claude-haiku-4')) return 64000;
  return 64000;
}

/** Fields of a Messages request that `/v1/messages/count_tokens` does not take. */
const GENERATION_ONLY_FIELDS = [
  'max_tokens',
  'stream',
  'stop_sequences',
  'temperature',
  'top_p',
  'top_k',
  'metadata',
  'service_tier',
] as const;

class Invalid extends Error {}

function fail(message: string): never {
  throw new Invalid(message);
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function quote(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : JSON.stringify(value);
}

export function validateRequest(body: unknown, options: ValidateOptions = {}): ValidationResult {
  try {
    check(body, options);
    return { ok: true };
  } catch (err) {
    if (err instanceof Invalid) return { ok: false, message: err.message };
    throw err;
  }
}

function check(body: unknown, options: ValidateOptions): void {
  if (!isObject(body)) fail('Request body must be a JSON object');

  // model
  if (!('model' in body)) fail('model: Field required');
  const model = body['model'];
  if (typeof model !== 'string') fail('model: Input should be a valid string');
  if (model.trim() === '') fail('model: String should have at least 1 character');

  // count_tokens counts a prompt: what only generating takes is refused, as the API refuses it.
  if (options.countTokens) {
    for (const field of GENERATION_ONLY_FIELDS) if (field in body) fail(`${field}: Extra inputs are not permitted`);
  }

  // max_tokens
  if (!options.countTokens) {
    if (!('max_tokens' in body)) fail('max_tokens: Field required');
    const maxTokens = body['max_tokens'];
    if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens))
      fail('max_tokens: Input should be a valid integer');
    if (maxTokens < 1) fail('max_tokens: Input should be greater than or equal to 1');
    const cap = maxOutputTokens(model);
    if (maxTokens > cap) {
      fail(`max_tokens: ${maxTokens} > ${cap}, which is the maximum allowed number of output tokens for ${model}`);
    }
  }

  // messages: shape of each message and block
  if (!('messages' in body)) fail('messages: Field required');
  const messages = body['messages'];
  if (!Array.isArray(messages)) fail('messages: Input should be a valid list');
  if (messages.length === 0) fail('messages: at least one message is required');
  messages.forEach((message, i) => checkMessageShape(message, i));

  checkSystem(body['system']);
  const toolNames = checkTools(body['tools']);
  checkToolChoice(body['tool_choice'], toolNames);
  checkOutputConfig(body);
  if (!options.countTokens) {
    checkStopSequences(body['stop_sequences']);
    checkTemperature(body['temperature']);
    if ('stream' in body && typeof body['stream'] !== 'boolean') fail('stream: Input should be a valid boolean');
  }

  // messages: conversation rules
  const typed = messages as Array<{ role: 'user' | 'assistant'; content: string | Json[] }>;
  // A conversation the API compacted may start from the compaction block, which opens an assistant message.
  const compacted = Array.isArray(typed[0]?.content) && typed[0].content[0]?.['type'] === 'compaction';
  if (typed[0]?.role !== 'user' && !compacted) fail('messages: first message must use the "user" role');
  for (let i = 1; i < typed.length; i++) {
    const role = typed[i]?.role;
    if (role === typed[i - 1]?.role) {
      fail(
        `messages: roles must alternate between "user" and "assistant", but found multiple "${role}" roles in a row`,
      );
    }
  }
  typed.forEach((message, i) => {
    const empty = typeof message.content === 'string' ? message.content.length === 0 : message.content.length === 0;
    const isFinalAssistant = i === typed.length - 1 && message.role === 'assistant';
    if (empty && !isFinalAssistant) {
      fail(`messages.${i}: all messages must have non-empty content except for the optional final assistant message`);
    }
  });
  checkText(typed);
  checkToolUseIds(typed);
  checkToolPairing(typed);
  checkServerToolPairing(typed);
  checkCacheControl(body);
}

/**
 * Text the API refuses: an empty text block anywhere, and blank text (a blank string content, or blank text blocks in
 * a message with no other text).
 */
function checkText(messages: Array<{ content: string | Json[] }>): void {
  for (const message of messages) {
    const content = message.content;
    if (typeof content === 'string') {
      if (content !== '' && content.trim() === '')
        fail('messages: text content blocks must contain non-whitespace text');
      continue;
    }
    const texts = content.filter((b) => b['type'] === 'text').map((b) => b['text'] as string);
    if (texts.some((text) => text === '')) fail('messages: text content blocks must be non-empty');
    if (texts.length > 0 && texts.every((text) => text.trim() === '')) {
      fail('messages: text content blocks must contain non-whitespace text');
    }
  }
}

/** A tool_use id may appear once in a request, across all its messages. */
function checkToolUseIds(messages: Array<{ content: string | Json[] }>): void {
  const seen = new Set<string>();
  messages.forEach((message, i) => {
    if (typeof message.content === 'string') return;
    message.content.forEach((block, j) => {
      if (block['type'] !== 'tool_use') return;
      const id = String(block['id']);
      if (seen.has(id)) fail(`messages.${i}.content.${j}: \`tool_use\` ids must be unique`);
      seen.add(id);
    });
  });
}

function checkMessageShape(message: unknown, i: number): void {
  if (!isObject(message)) fail(`messages.${i}: Input should be a valid dictionary`);
  if (!('role' in message)) fail(`messages.${i}.role: Field required`);
  if (message['role'] !== 'user' && message['role'] !== 'assistant') {
    fail(`messages.${i}.role: Input should be 'user' or 'assistant'`);
  }
  if (!('content' in message)) fail(`messages.${i}.content: Field required`);
  const content = message['content'];
  if (typeof content === 'string') return;
  if (!Array.isArray(content))
    fail(`messages.${i}.content: Input should be a valid string or a list of content blocks`);
  content.forEach((block, j) => checkBlockShape(block, `messages.${i}.content.${j}`, message['role'] as string));
}

function checkBlockShape(block: unknown, path: string, role: string): void {
  if (!isObject(block)) fail(`${path}: Input should be a valid dictionary`);
  const type = block['type'];
  if (typeof type !== 'string') fail(`${path}.type: Field required`);
  switch (type) {
    case 'text':
      if (typeof block['text'] !== 'string') fail(`${path}.text.text: Input should be a valid string`);
      break;
    case 'tool_use':
      if (role !== 'assistant') fail(`${path}: \`tool_use\` blocks can only be in "assistant" messages`);
      if (typeof block['id'] !== 'string' || block['id'] === '') fail(`${path}.tool_use.id: Field required`);
      if (!TOOL_USE_ID.test(block['id'])) fail(`${path}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
      if (typeof block['name'] !== 'string') fail(`${path}.tool_use.name: Field required`);
      if (!isObject(block['input'])) fail(`${path}.tool_use.input: Input should be a valid dictionary`);
      break;
    case 'tool_result': {
      if (role !== 'user') fail(`${path}: \`tool_result\` blocks can only be in "user" messages`);
      if (typeof block['tool_use_id'] !== 'string') fail(`${path}.tool_result.tool_use_id: Field required`);
      const content = block['content'];
      if (content !== undefined && typeof content !== 'string' && !Array.isArray(content)) {
        fail(`${path}.tool_result.content: Input should be a valid string or a list of content blocks`);
      }
      if ('is_error' in block && typeof block['is_error'] !== 'boolean') {
        fail(`${path}.tool_result.is_error: Input should be a valid boolean`);
      }
      break;
    }
    default:
      break; // images, documents, thinking…: accepted as they are
  }
}

function checkSystem(system: unknown): void {
  if (system === undefined || typeof system === 'string') return;
  if (!Array.isArray(system)) fail('system: Input should be a valid string or a list of text blocks');
  system.forEach((block, i) => {
    if (!isObject(block) || block['type'] !== 'text' || typeof block['text'] !== 'string') {
      fail(`system.${i}: Input should be a text block ({"type": "text", "text": ...})`);
    }
  });
}

/** Returns the names of the tools (empty when there are none). */
function checkTools(tools: unknown): Set<string> {
  const names = new Set<string>();
  if (tools === undefined) return names;
  if (!Array.isArray(tools)) fail('tools: Input should be a valid list');
  let duplicate = false;
  tools.forEach((tool, i) => {
    if (!isObject(tool)) fail(`tools.${i}: Input should be a valid dictionary`);
    // Server tools (`type: 'web_search_20250305'`, …) have no input_schema; custom tools have no type or 'custom'.
    const custom = tool['type'] === undefined || tool['type'] === null || tool['type'] === 'custom';
    const path = custom ? `tools.${i}.custom` : `tools.${i}`;
    const name = tool['name'];
    if (name === undefined) fail(`${path}.name: Field required`);
    if (typeof name !== 'string') fail(`${path}.name: Input should be a valid string`);
    if (!TOOL_NAME.test(name)) fail(`${path}.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`);
    if (custom) {
      const schema = tool['input_schema'];
      if (schema === undefined) fail(`${path}.input_schema: Field required`);
      if (!isObject(schema)) fail(`${path}.input_schema: Input should be a valid dictionary`);
      if (!('type' in schema)) fail(`${path}.input_schema.type: Field required`);
      if (schema['type'] !== 'object') fail(`${path}.input_schema.type: Input should be 'object'`);
    }
    if (names.has(name)) duplicate = true;
    names.add(name);
  });
  if (duplicate) fail('tools: Tool names must be unique.');
  return names;
}

function checkToolChoice(choice: unknown, toolNames: Set<string>): void {
  if (choice === undefined) return;
  if (!isObject(choice)) fail('tool_choice: Input should be a valid dictionary');
  const type = choice['type'];
  if (typeof type !== 'string' || !(TOOL_CHOICE_TYPES as readonly string[]).includes(type)) {
    fail(
      `tool_choice: Input tag ${quote(type)} found using 'type' does not match any of the expected tags: ` +
        TOOL_CHOICE_TYPES.map((t) => `'${t}'`).join(', '),
    );
  }
  if ('disable_parallel_tool_use' in choice && typeof choice['disable_parallel_tool_use'] !== 'boolean') {
    fail(`tool_choice.${type}.disable_parallel_tool_use: Input should be a valid boolean`);
  }
  if (type !== 'tool') return;
  const name = choice['name'];
  if (typeof name !== 'string') fail('tool_choice.tool.name: Field required');
  if (!toolNames.has(name)) {
    const available = toolNames.size > 0 ? [...toolNames].join(', ') : 'none';
    fail(`tool_choice.tool.name: Tool '${name}' not found in tools (available: ${available})`);
  }
}

/** The keywords a structured-output schema may use (the API's subset; the SDK moves the rest into descriptions). */
const OUTPUT_SCHEMA_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  'allOf',
  '$ref',
  '$defs',
  'definitions',
  'description',
  'title',
  'format',
  'minItems',
  'default',
  '$schema',
]);
const OUTPUT_EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'];

/**
 * `output_config` (structured outputs, `effort`): a `format` is `{type: 'json_schema', schema}` whose schema keeps to
 * the supported subset — every object closed with `additionalProperties: false`, no numeric or string bounds,
 * `minItems` 0 or 1. The deprecated top-level `output_format` is refused here: the project sends the current field.
 */
function checkOutputConfig(body: Json): void {
  if ('output_format' in body) {
    fail('output_format: this parameter has moved to output_config.format');
  }
  const config = body['output_config'];
  if (config === undefined || config === null) return;
  if (!isObject(config)) fail('output_config: Input should be a valid dictionary');
  const effort = config['effort'];
  if (effort !== undefined && effort !== null && !OUTPUT_EFFORTS.includes(effort as string)) {
    fail(`output_config.effort: Input should be ${OUTPUT_EFFORTS.map((e) => `'${e}'`).join(', ')}`);
  }
  const format = config['format'];
  if (format === undefined || format === null) return;
  if (!isObject(format)) fail('output_config.format: Input should be a valid dictionary');
  if (format['type'] !== 'json_schema') fail("output_config.format.type: Input should be 'json_schema'");
  if (!('schema' in format)) fail('output_config.format.schema: Field required');
  const schema = format['schema'];
  if (!isObject(schema)) fail('output_config.format.schema: Input should be a valid dictionary');
  checkOutputSchema(schema, 'output_config.format.schema');
  if (isRecursive(schema)) fail('output_config.format.schema: Recursive schemas are not supported');
}

/** Whether a `$ref` leads back to where it came from (`#` itself, or a cycle through `$defs`). */
function isRecursive(root: Json): boolean {
  const defs = {
    ...(isObject(root['$defs']) ? root['$defs'] : {}),
    ...(isObject(root['definitions']) ? root['definitions'] : {}),
  };
  const refsOf = (node: unknown, out: string[] = []): string[] => {
    if (Array.isArray(node)) node.forEach((item) => refsOf(item, out));
    else if (isObject(node)) {
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string') out.push(value);
        else if (key !== '$defs' && key !== 'definitions') refsOf(value, out);
      }
    }
    return out;
  };
  const target = (ref: string) => /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref)?.[1];
  if (refsOf(root).includes('#')) return true;
  const visiting = new Set<string>();
  const done = new Set<string>();
  const cycles = (name: string): boolean => {
    if (visiting.has(name)) return true;
    if (done.has(name)) return false;
    visiting.add(name);
    for (const ref of refsOf(defs[name])) {
      if (ref === '#') return true;
      const next = target(ref);
      if (next !== undefined && next in defs && cycles(next)) return true;
    }
    visiting.delete(name);
    done.add(name);
    return false;
  };
  return Object.keys(defs).some(cycles);
}

function checkOutputSchema(schema: unknown, path: string): void {
  if (typeof schema === 'boolean') return;
  if (!isObject(schema)) fail(`${path}: Input should be a valid dictionary`);
  for (const key of Object.keys(schema)) {
    if (!OUTPUT_SCHEMA_KEYWORDS.has(key)) {
      fail(`${path}: The schema keyword '${key}' is not supported in structured outputs`);
    }
  }
  const types = Array.isArray(schema['type']) ? schema['type'] : [schema['type']];
  if (types.includes('object') && schema['additionalProperties'] !== false) {
    fail(`${path}: For 'object' type, 'additionalProperties' must be explicitly set to false`);
  }
  const minItems = schema['minItems'];
  if (minItems !== undefined && minItems !== 0 && minItems !== 1) {
    fail(`${path}: For 'array' type, only minItems values 0 and 1 are supported`);
  }
  if (isObject(schema['properties'])) {
    for (const [name, property] of Object.entries(schema['properties'])) {
      checkOutputSchema(property, `${path}.properties.${name}`);
    }
  }
  if (schema['items'] !== undefined) checkOutputSchema(schema['items'], `${path}.items`);
  for (const key of ['anyOf', 'allOf'] as const) {
    const list = schema[key];
    if (Array.isArray(list)) list.forEach((entry, i) => checkOutputSchema(entry, `${path}.${key}.${i}`));
  }
  for (const key of ['$defs', 'definitions'] as const) {
    const defs = schema[key];
    if (isObject(defs))
      for (const [name, def] of Object.entries(defs)) checkOutputSchema(def, `${path}.${key}.${name}`);
  }
}

/** The JSON Schema a request asks the final text to match (`output_config.format.schema`), if any. */
export function outputSchemaOf(body: Json): Json | undefined {
  const config = body['output_config'];
  const format = isObject(config) ? config['format'] : undefined;
  return isObject(format) && isObject(format['schema']) ? format['schema'] : undefined;
}

function checkStopSequences(stops: unknown): void {
  if (stops === undefined) return;
  if (!Array.isArray(stops)) fail('stop_sequences: Input should be a valid list');
  stops.forEach((stop, i) => {
    if (typeof stop !== 'string') fail(`stop_sequences.${i}: Input should be a valid string`);
    if (stop.length === 0) fail(`stop_sequences.${i}: String should have at least 1 character`);
    if (stop.trim() === '') fail('stop_sequences: each stop sequence must contain non-whitespace');
  });
}

function checkTemperature(temperature: unknown): void {
  if (temperature === undefined) return;
  if (typeof temperature !== 'number' || Number.isNaN(temperature)) fail('temperature: Input should be a valid number');
  if (temperature < 0) fail('temperature: Input should be greater than or equal to 0');
  if (temperature > 1) fail('temperature: Input should be less than or equal to 1');
}

/**
 * Every tool_use of an assistant message is answered by a tool_result in the very next (user) message, and those
 * tool_results come first in it; a tool_result answers a tool_use of the message right before it.
 */
function checkToolPairing(messages: Array<{ role: 'user' | 'assistant'; content: string | Json[] }>): void {
  messages.forEach((message, i) => {
    const blocks = typeof message.content === 'string' ? [] : message.content;
    if (message.role === 'assistant') {
      const ids = blocks.filter((b) => b['type'] === 'tool_use').map((b) => String(b['id']));
      if (ids.length === 0) return;
      const next = messages[i + 1];
      const nextBlocks = next && typeof next.content !== 'string' ? next.content : [];
      const answered = new Set(
        nextBlocks.filter((b) => b['type'] === 'tool_result').map((b) => String(b['tool_use_id'])),
      );
      const missing = ids.filter((id) => !answered.has(id));
      if (missing.length > 0) {
        fail(
          `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. ` +
            'Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
        );
      }
      return;
    }
    const previous = messages[i - 1];
    const previousBlocks = previous && typeof previous.content !== 'string' ? previous.content : [];
    const offered = new Set(previousBlocks.filter((b) => b['type'] === 'tool_use').map((b) => String(b['id'])));
    let leading = true;
    let leadingResults = 0;
    blocks.forEach((block, j) => {
      if (block['type'] !== 'tool_result') {
        leading = false;
        return;
      }
      const id = String(block['tool_use_id']);
      if (!offered.has(id)) {
        fail(
          `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. ` +
            'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
        );
      }
      if (leading) leadingResults++;
    });
    if (offered.size > 0 && leadingResults < offered.size) {
      fail(
        `messages.${i}: Did not find ${offered.size} \`tool_result\` block(s) at the beginning of this message. ` +
          'Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.',
      );
    }
  });
}

/** The result block each server tool's call is answered with (by the call's `name`). */
const SERVER_TOOL_RESULT_OF: Record<string, string> = {
  web_search: 'web_search_tool_result',
  web_fetch: 'web_fetch_tool_result',
  code_execution: 'code_execution_tool_result',
  bash_code_execution: 'bash_code_execution_tool_result',
  text_editor_code_execution: 'text_editor_code_execution_tool_result',
  tool_search_tool_regex: 'tool_search_tool_result',
  tool_search_tool_bm25: 'tool_search_tool_result',
};
const SERVER_RESULTS: ReadonlySet<string> = new Set(SERVER_TOOL_RESULT_TYPES);

/**
 * A server tool's call (`server_tool_use`) and its result are assistant blocks, the result after the call in the same
 * message. The API leaves a call open in two places only: in the request's final assistant message (a paused turn sent
 * back to continue), and in a message that stopped for client tool calls, when the next message holds nothing but
 * their `tool_result` blocks (the API runs the server tool then, and the reply after opens with its result). Anything
 * after those tool_results ends the assistant turn, and the open call is refused.
 */
function checkServerToolPairing(messages: Array<{ role: 'user' | 'assistant'; content: string | Json[] }>): void {
  const blocksOf = (i: number): Json[] => {
    const content = messages[i]?.content;
    return Array.isArray(content) ? content : [];
  };
  // Whether message i (an assistant message) may leave server tool calls to the reply after the next message.
  const defers = (i: number): boolean => {
    const next = messages[i + 1];
    const results = blocksOf(i + 1);
    return (
      blocksOf(i).some((b) => b['type'] === 'tool_use') &&
      next?.role === 'user' &&
      results.length > 0 &&
      results.every((b) => b['type'] === 'tool_result')
    );
  };
  messages.forEach((message, i) => {
    const blocks = blocksOf(i);
    if (message.role === 'user') {
      blocks.forEach((block, j) => {
        const type = String(block['type']);
        if (type === 'server_tool_use' || SERVER_RESULTS.has(type)) {
          fail(`messages.${i}.content.${j}: \`${type}\` blocks can only be in "assistant" messages`);
        }
      });
      return;
    }
    const calls = new Map<string, string>(); // id → tool name, in this message so far
    blocks.forEach((block, j) => {
      const type = String(block['type']);
      if (type === 'server_tool_use') calls.set(String(block['id']), String(block['name']));
      if (!SERVER_RESULTS.has(type)) return;
      const id = String(block['tool_use_id']);
      if (calls.delete(id)) return;
      // A deferred call's result opens the reply after the client tools' results.
      const deferred =
        i >= 2 && defers(i - 2) && blocksOf(i - 2).some((b) => b['type'] === 'server_tool_use' && b['id'] === id);
      if (deferred) return;
      fail(
        `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`${type}\` blocks: ${id}. ` +
          `Each \`${type}\` block must have a corresponding \`server_tool_use\` block before it.`,
      );
    });
    if (calls.size === 0 || i === messages.length - 1) return;
    const answeredLater = defers(i)
      ? new Set(
          blocksOf(i + 2)
            .filter((b) => SERVER_RESULTS.has(String(b['type'])))
            .map((b) => String(b['tool_use_id'])),
        )
      : undefined;
    for (const [id, name] of calls) {
      if (answeredLater && (i + 2 >= messages.length || answeredLater.has(id))) continue;
      const result = SERVER_TOOL_RESULT_OF[name] ?? `${name}_tool_result`;
      fail(
        `messages.${i}: \`${name}\` tool use with id \`${id}\` was found without a corresponding \`${result}\` block`,
      );
    }
  });
}

function checkCacheControl(body: Json): void {
  let count = 0;
  const visit = (block: unknown, path: string): void => {
    if (!isObject(block) || !('cache_control' in block) || block['cache_control'] == null) return;
    const control = block['cache_control'];
    if (!isObject(control) || control['type'] !== 'ephemeral')
      fail(`${path}.cache_control.type: Input should be 'ephemeral'`);
    if ('ttl' in control && control['ttl'] !== '5m' && control['ttl'] !== '1h') {
      fail(`${path}.cache_control.ttl: Input should be '5m' or '1h'`);
    }
    count++;
  };
  if (Array.isArray(body['tools'])) body['tools'].forEach((tool, i) => visit(tool, `tools.${i}`));
  if (Array.isArray(body['system'])) body['system'].forEach((block, i) => visit(block, `system.${i}`));
  (body['messages'] as Json[]).forEach((message, i) => {
    const content = message['content'];
    if (!Array.isArray(content)) return;
    content.forEach((block, j) => {
      visit(block, `messages.${i}.content.${j}`);
      // A breakpoint may also sit inside a tool_result's content.
      if (isObject(block) && Array.isArray(block['content'])) {
        block['content'].forEach((inner, k) => visit(inner, `messages.${i}.content.${j}.content.${k}`));
      }
    });
  });
  if (isObject(body['cache_control'])) count++; // automatic caching uses one of the four slots
  if (count > MAX_CACHE_BREAKPOINTS) {
    fail(`A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${count}.`);
  }
}
