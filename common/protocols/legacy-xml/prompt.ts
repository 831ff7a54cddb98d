// The system-prompt section that teaches the model the legacy format and describes the tools.
import type { ToolDescription } from '../types';
import { type JsonType, schemaTypes } from './coerce';

/** Escapes `&`, `<`, `>` so that text cannot open or close a tag of the prompt. */
export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function own(obj: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
}

const PLURAL: Record<JsonType, string> = {
  string: 'strings',
  integer: 'integers',
  number: 'numbers',
  boolean: 'booleans',
  array: 'arrays',
  object: 'objects',
  null: 'nulls',
};

const TYPE_ORDER: readonly JsonType[] = ['string', 'integer', 'number', 'boolean', 'array', 'object', 'null'];

function typeNames(schema: unknown): JsonType[] {
  const types = schemaTypes(schema);
  return TYPE_ORDER.filter((t) => types.has(t));
}

function literal(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/** The notes that follow a parameter's own description. */
function parameterNotes(schema: Record<string, unknown>, types: JsonType[], required: boolean): string[] {
  const notes: string[] = [];
  if (!required) notes.push('Optional.');
  if (types.includes('array')) {
    const items = typeNames(own(schema, 'items')).map((t) => PLURAL[t]);
    notes.push(`Write the value as a JSON array${items.length > 0 ? ` of ${items.join(' or ')}` : ''}.`);
  }
  if (types.includes('object')) {
    const props = own(schema, 'properties');
    const keys = isRecord(props) ? Object.keys(props) : [];
    notes.push(`Write the value as a JSON object${keys.length > 0 ? ` with keys ${keys.join(', ')}` : ''}.`);
  }
  if (types.includes('boolean')) notes.push('Write true or false.');
  if (types.includes('null')) notes.push('Write null for no value.');
  const values = own(schema, 'enum');
  if (Array.isArray(values) && values.length > 0) notes.push(`One of: ${values.map(literal).join(', ')}.`);
  const constant = own(schema, 'const');
  if (constant !== undefined) notes.push(`Always ${literal(constant)}.`);
  const dflt = own(schema, 'default');
  if (dflt !== undefined) notes.push(`Default: ${literal(dflt)}.`);
  return notes;
}

function renderParameter(name: string, schema: unknown, required: boolean): string {
  const s = isRecord(schema) ? schema : {};
  const types = typeNames(s);
  const description = typeof own(s, 'description') === 'string' ? (own(s, 'description') as string).trim() : '';
  const text = [description, ...parameterNotes(s, types, required)].filter((x) => x !== '').join(' ');
  return [
    '<parameter>',
    `<name>${escapeXml(name)}</name>`,
    `<type>${escapeXml(types.length > 0 ? types.join(' or ') : 'string')}</type>`,
    `<description>${escapeXml(text)}</description>`,
    '</parameter>',
  ].join('\n');
}

function renderTool(tool: ToolDescription): string {
  const description = [(tool.description ?? '').trim()];
  if (tool.returns !== undefined && tool.returns.trim() !== '') description.push(`Returns: ${tool.returns.trim()}`);
  const raises = (tool.raises ?? []).map((r) => r.trim()).filter((r) => r !== '');
  if (raises.length === 1) description.push(`Raises: ${raises[0]}`);
  else if (raises.length > 1) description.push(`Raises:\n${raises.map((r) => `- ${r}`).join('\n')}`);

  const schema: Record<string, unknown> = isRecord(tool.input_schema) ? tool.input_schema : {};
  const properties = isRecord(own(schema, 'properties')) ? (own(schema, 'properties') as Record<string, unknown>) : {};
  const requiredList = own(schema, 'required');
  const required = new Set(Array.isArray(requiredList) ? requiredList.filter((r) => typeof r === 'string') : []);
  const parameters = Object.keys(properties).map((name) => renderParameter(name, properties[name], required.has(name)));

  return [
    '<tool_description>',
    `<tool_name>${escapeXml(tool.name)}</tool_name>`,
    `<description>\n${escapeXml(description.filter((d) => d !== '').join('\n'))}\n</description>`,
    '<parameters>',
    ...parameters,
    '</parameters>',
    '</tool_description>',
  ].join('\n');
}

const INTRO = `In this environment you have access to a set of tools you can use to answer the user's question.

You may call them like this:
<function_calls>
<invoke>
<tool_name>$TOOL_NAME</tool_name>
<parameters>
<$PARAMETER_NAME>$PARAMETER_VALUE</$PARAMETER_NAME>
...
</parameters>
</invoke>
</function_calls>`;

const HOW = `To call several tools at once, put several <invoke> blocks in one <function_calls> block. Write each \
parameter value as plain text, exactly as the tool should receive it, with no escaping; write array and object \
values as JSON. Leave out optional parameters you do not need.

After </function_calls>, stop and wait. The results come back in the next message, one per <invoke> and in the same \
order, like this:
<function_results>
<result>
<tool_name>$TOOL_NAME</tool_name>
<stdout>
$TOOL_OUTPUT
</stdout>
</result>
</function_results>

A call that failed comes back in place of its <result> as:
<error>
$TOOL_NAME: $ERROR_MESSAGE
</error>
Read the message; correct the call and try again if that makes sense.

When you have the final answer, write it inside <answer></answer> tags.`;

/**
 * The system-prompt section for the legacy format: the documented intro and call template, one `<tool_description>`
 * per tool (generated from its JSON Schema), then how results come back and where the final answer goes.
 * `instructions` (the conversation's own system prompt, if any) comes first, separated by a blank line.
 * Every name and description is XML-escaped, so no description can break the prompt's structure.
 */
export function renderToolsPrompt(tools: ToolDescription[], instructions?: string): string {
  const sections: string[] = [];
  if (instructions !== undefined && instructions.trim() !== '') sections.push(instructions.trim());
  sections.push(INTRO);
  sections.push(`Here are the tools available:\n<tools>\n${tools.map(renderTool).join('\n')}\n</tools>`);
  sections.push(HOW);
  return sections.join('\n\n');
}
