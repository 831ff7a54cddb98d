// The tools a request offers (native: `tools`; legacy: `<tool_description>`s in the system prompt), and the input the
// demo model fills in for a tool it is forced to call.
import { tickerFor } from './intent';
import { isObject } from './read-request';
import type { Json } from './types';

export interface ToolInfo {
  name: string;
  /** Parameter names, required ones first. */
  params: string[];
  /** The required parameters (native; legacy descriptions do not say: all of them). */
  required: string[];
  /** JSON Schema type per parameter (native only). */
  types: Record<string, string>;
  /** Allowed values per parameter with an `enum` (native only). */
  enums: Record<string, unknown[]>;
}

export function nativeTools(body: Json): Map<string, ToolInfo> {
  const tools = new Map<string, ToolInfo>();
  if (!Array.isArray(body['tools'])) return tools;
  for (const tool of body['tools']) {
    if (!isObject(tool) || typeof tool['name'] !== 'string') continue;
    tools.set(tool['name'], schemaInfo(tool['name'], isObject(tool['input_schema']) ? tool['input_schema'] : {}));
  }
  return tools;
}

/** What the demo model reads of an object JSON Schema (a tool's input, or a structured output's format). */
export function schemaInfo(name: string, schema: Json): ToolInfo {
  const properties = isObject(schema['properties']) ? schema['properties'] : {};
  const required = Array.isArray(schema['required']) ? schema['required'].map(String) : [];
  const params = [...new Set([...required, ...Object.keys(properties)])];
  const types: Record<string, string> = {};
  const enums: Record<string, unknown[]> = {};
  for (const [param, prop] of Object.entries(properties)) {
    if (isObject(prop) && typeof prop['type'] === 'string') types[param] = prop['type'];
    if (isObject(prop) && Array.isArray(prop['enum'])) enums[param] = prop['enum'];
  }
  return { name, params, required, types, enums };
}

/** An agent tool (a sub-agent, activities/agent-tool-definition.ts): its one parameter is the task, in words. */
export function isAgentTool(tool: ToolInfo | undefined): boolean {
  return tool !== undefined && tool.params.length === 1 && tool.params[0] === 'task';
}

export function legacyTools(system: string): Map<string, ToolInfo> {
  const tools = new Map<string, ToolInfo>();
  for (const match of system.matchAll(/<tool_description>([\s\S]*?)<\/tool_description>/g)) {
    const section = match[1] ?? '';
    const name = /<tool_name>\s*([\s\S]*?)\s*<\/tool_name>/.exec(section)?.[1]?.trim();
    if (!name) continue;
    const params = [...section.matchAll(/<parameter>\s*<name>\s*([\s\S]*?)\s*<\/name>/g)].map((m) =>
      (m[1] ?? '').trim(),
    );
    const names = params.filter(Boolean);
    tools.set(name, { name, params: names, required: names, types: {}, enums: {} });
  }
  return tools;
}

/** The parameter of `tool` that plays `role` (e.g. the tool calls it `company` instead of `company_name`). */
export function paramName(tool: ToolInfo | undefined, preferred: string, pattern: RegExp): string {
  if (!tool || tool.params.length === 0) return preferred;
  if (tool.params.includes(preferred)) return preferred;
  return tool.params.find((p) => pattern.test(p)) ?? tool.params[0] ?? preferred;
}

export interface Context {
  text: string;
  company?: string;
  symbol?: string;
  location?: string;
  /** The stock price a tool returned in this conversation. */
  price?: number;
  /** The answer the model would write (filling a typed answer's text fields). */
  answer?: string;
}

/**
 * The best input for a tool the model is forced to call: each required parameter (all of them when the schema names
 * none) filled from what the conversation says.
 */
export function inferInput(tool: ToolInfo, context: Context): Json {
  const input: Json = {};
  for (const param of tool.required.length > 0 ? tool.required : tool.params) {
    const type = tool.types[param] ?? 'string';
    const allowed = tool.enums[param];
    if (allowed && allowed.length > 0) input[param] = allowed[0];
    else if (/company|organi[sz]ation|firm/i.test(param)) input[param] = context.company ?? context.text;
    else if (/symbol|ticker/i.test(param))
      input[param] = context.symbol ?? (context.company && tickerFor(context.company)) ?? context.text;
    else if (/location|city|place|where/i.test(param)) input[param] = context.location ?? context.text;
    else if (/price|amount|value|cost/i.test(param) && (type === 'number' || type === 'integer'))
      input[param] = context.price ?? 0;
    else if (type === 'number' || type === 'integer') input[param] = 0;
    else if (type === 'boolean') input[param] = false;
    else if (type === 'array') input[param] = [];
    else if (type === 'object') input[param] = {};
    else input[param] = context.answer ?? context.text;
  }
  return input;
}
