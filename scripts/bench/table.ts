// The report's one structure: every section states its figures as tables (a title, headers, rows, notes, and
// optionally the chart the HTML report draws from them), and the console and HTML reports both render those tables.
import { bars, escapeXml, PALETTE } from './svg';

/** A figure keeps its value beside its text, so a chart can draw it and the text table right-aligns it. */
export type Cell = string | { text: string; value: number };

export interface Table {
  title: string;
  headers: string[];
  rows: Cell[][];
  notes?: string[];
  /** One group per row (labelled by its first `labelCells` cells, default 1), one bar per named column. */
  chart?: { title: string; yLabel: string; columns: string[]; labelCells?: number; stacked?: boolean };
}

export const cell = (value: number, text: string): Cell => ({ text, value });
export const textOf = (c: Cell | undefined): string => (c === undefined ? '' : typeof c === 'string' ? c : c.text);

/** A plain-text table with aligned columns: figures ("219 ms", "24.33×", "97.4%", "3359", "12/100") right-aligned. */
export function textTable(headers: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => textOf(row[i]).length)));
  const numeric = (c: Cell | undefined): boolean =>
    typeof c === 'object' ||
    (c !== undefined && (c === '–' || /^[-+]?\d[\d.,/]*( ?(ms|s|B|KB|KiB|MiB|%|×))?( \(timeout\))?$/.test(c)));
  const line = (cells: readonly (Cell | undefined)[], isHeader = false): string =>
    headers
      .map((_, i) => {
        const text = textOf(cells[i]);
        return !isHeader && numeric(cells[i]) ? text.padStart(widths[i]!) : text.padEnd(widths[i]!);
      })
      .join('  ')
      .trimEnd();
  return [line(headers, true), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map((row) => line(row))].join('\n');
}

export function renderText(table: Table): string {
  const heading = `── ${table.title} ${'─'.repeat(Math.max(0, 100 - table.title.length))}`;
  const body = table.headers.length ? [textTable(table.headers, table.rows)] : [];
  return ['', heading, ...body, ...(table.notes ?? []).map((note) => `  ${note}`)].join('\n');
}

function chartOf(table: Table): string {
  const spec = table.chart;
  if (!spec) return '';
  const labelCells = spec.labelCells ?? 1;
  const rows = table.rows.filter((row) =>
    spec.columns.some((name) => typeof row[table.headers.indexOf(name)] === 'object'),
  );
  // A row whose first cell is empty continues the group above it (the way the text tables are laid out).
  let group = '';
  const categories = rows.map((row) => {
    const cells = row.slice(0, labelCells).map(textOf);
    if (cells[0]) group = cells[0];
    else cells[0] = group;
    return cells.join(' ').trim();
  });
  const series = spec.columns.map((name, i) => ({
    name,
    color: PALETTE[i % PALETTE.length]!,
    values: rows.map((row) => {
      const c = row[table.headers.indexOf(name)];
      return typeof c === 'object' ? c.value : Number.NaN;
    }),
  }));
  const width = Math.max(640, rows.length * 70);
  return bars({ title: spec.title, yLabel: spec.yLabel, categories, series, width, stacked: spec.stacked === true });
}

export function renderHtml(table: Table): string {
  const head = table.headers.map((h) => `<th>${escapeXml(h)}</th>`).join('');
  const rows = table.rows
    .map((row) => `<tr>${table.headers.map((_, i) => `<td>${escapeXml(textOf(row[i]))}</td>`).join('')}</tr>`)
    .join('');
  const notes = (table.notes ?? []).map((note) => `<p>${escapeXml(note)}</p>`).join('');
  return (
    `<h2>${escapeXml(table.title)}</h2>` +
    (table.headers.length ? `<table><tr>${head}</tr>${rows}</table>` : '') +
    notes +
    (table.chart ? `<div class="chart">${chartOf(table)}</div>` : '')
  );
}
