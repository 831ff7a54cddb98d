// A plain-text table with aligned columns: figures ("219 ms", "24.33×", "97.4%", "3359", "12/100") right-aligned.

export function textTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)));
  const numeric = (cell: string): boolean =>
    cell === '–' || /^[-+]?\d[\d.,/]*( ?(ms|s|B|KiB|MiB|%|×))?( \(timeout\))?( \d+ failed)?$/.test(cell);
  const line = (cells: readonly string[], isHeader = false): string =>
    cells
      .map((cell, i) => (!isHeader && numeric(cell) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers, true), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map((row) => line(row))].join('\n');
}
