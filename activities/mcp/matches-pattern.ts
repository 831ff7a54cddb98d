// Approval patterns of an MCP server's configuration: tool names where `*` stands for any run of characters.

/** Whether `name` matches one of the patterns, where `*` stands for any run of characters (`edit_*`, `*`). */
export function matchesPattern(name: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => {
    const source = pattern.split('*').map(escapeRegExp).join('.*');
    return new RegExp(`^${source}$`).test(name);
  });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
