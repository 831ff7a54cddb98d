// An MCP tool's result → the blocks of a `tool_result`: text stays text, images the API can read become image
// blocks, and what it cannot take (embedded resources, resource links, audio, other image types) becomes text the
// model can read. Text past the limit is cut with the same visible marker as the built-in tools' results; images
// past theirs are replaced by a line saying so, so a result can never become an oversized payload.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Base64ImageSource } from '@anthropic-ai/sdk/resources/messages';
import { limitText } from '../../common/bounded-text';
import type { ToolResultBlock } from '../../common/protocols/types';

export { limitText };

export interface ResultLimits {
  /** Characters of text in all, markers included. */
  maxTextChars: number;
  /** Base64 characters of images in all. */
  maxImageChars: number;
}

/** The image types the Messages API reads. */
const API_IMAGE_TYPES = new Set<string>(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

type McpBlock = CallToolResult['content'][number];

export function toToolResultBlocks(result: CallToolResult, limits: ResultLimits): ToolResultBlock[] {
  const blocks: ToolResultBlock[] = [];
  let imageChars = 0;
  const text = (value: string) => blocks.push({ type: 'text', text: value });
  for (const block of result.content ?? []) {
    if (block.type === 'image' && API_IMAGE_TYPES.has(block.mimeType)) {
      if (imageChars + block.data.length <= limits.maxImageChars) {
        imageChars += block.data.length;
        const mediaType = block.mimeType as Base64ImageSource['media_type'];
        blocks.push({ type: 'image', source: { type: 'base64', media_type: mediaType, data: block.data } });
      } else {
        text(
          `[image omitted: ${block.mimeType}, ${base64Bytes(block.data)} bytes, over the ${limits.maxImageChars}-character limit for images in one result]`,
        );
      }
      continue;
    }
    text(describe(block));
  }
  // A tool with an output schema returns structured content; the spec asks for a text copy too, but not every tool
  // sends one.
  if (blocks.length === 0 && result.structuredContent !== undefined) text(JSON.stringify(result.structuredContent));
  if (blocks.length === 0)
    text(result.isError ? '(the tool failed and said nothing more)' : '(the tool returned no content)');
  return limitText(blocks, limits.maxTextChars);
}

/** A block the API has no place for, in words. */
function describe(block: McpBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
      return `[image not shown: ${block.mimeType} is not an image type the model reads (${base64Bytes(block.data)} bytes)]`;
    case 'audio':
      return `[audio not shown: ${block.mimeType}, ${base64Bytes(block.data)} bytes]`;
    case 'resource': {
      const { resource } = block;
      const type = resource.mimeType ? ` (${resource.mimeType})` : '';
      if ('text' in resource) return `[resource ${resource.uri}${type}]\n${resource.text}`;
      return `[binary resource ${resource.uri}${type}, ${base64Bytes(resource.blob)} bytes, not shown]`;
    }
    case 'resource_link': {
      const details = [block.mimeType, block.size !== undefined ? `${block.size} bytes` : undefined].filter(Boolean);
      const about = block.description ? `: ${block.description}` : '';
      return `[resource link] ${block.title ?? block.name} <${block.uri}>${details.length ? ` (${details.join(', ')})` : ''}${about}`;
    }
    default:
      return `[${(block as { type: string }).type} content not shown]`;
  }
}

function base64Bytes(data: string): number {
  return Math.floor((data.replace(/=+$/, '').length * 3) / 4);
}
