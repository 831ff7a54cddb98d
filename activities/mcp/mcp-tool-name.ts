// The name the model calls an MCP tool by: `server__tool`, with every character the Messages API does not allow
// (`^[a-zA-Z0-9_-]{1,64}$`) written as `_`, shortened with a digest of the original when too long, and numbered when
// it would be the same as a name already taken (another server's tool, or a tool of the worker's own).
import { digest } from '../../common/digest';

const MAX = 64;

export function mcpToolName(server: string, tool: string, taken: ReadonlySet<string>): string {
  let name = `${server}__${tool}`.replace(/[^a-zA-Z0-9_-]/g, '_');
  if (name.length > MAX) name = `${name.slice(0, MAX - 9)}_${digest([server, tool]).slice(0, 8)}`;
  if (!taken.has(name)) return name;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const numbered = name.slice(0, MAX - suffix.length) + suffix;
    if (!taken.has(numbered)) return numbered;
  }
}
