// The report's one structure: every section states its figures as tables (a title, headers, rows, notes), and the
// console and HTML reports both render those tables. Number formatting, and the cells of a load run, live here too.
import { type Phases, PHASES } from './history';
import type { LoadRun } from './load';
import { percentile } from './measure';

export interface Table {
  title: string;
  headers: string[];
  rows: string[][];
  notes?: string[];
}

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (Math.abs(ms) >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (Math.abs(ms) >= 100) return `${ms.toFixed(0)} ms`;
  return `${ms.toFixed(1)} ms`;
}

export const pct = (fraction: number): string => (Number.isFinite(fraction) ? `${(fraction * 100).toFixed(1)}%` : '–');
export const fmtNum = (value: number, digits = 1): string => (Number.isFinite(value) ? value.toFixed(digits) : '–');
export const fmtRatio = (value: number, digits = 2): string =>
  Number.isFinite(value) ? `${value.toFixed(digits)}×` : '–';

export function fmtBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '–';
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  if (bytes >= 10 * 1024) return `${(bytes / 1024).toFixed(0)} KiB`;
  return `${Math.round(bytes)} B`;
}

/** Figures ("219 ms", "24.33×", "0.91–1.03×", "97.4%", "3359", "12/100", "1.20 (3.50)") are right-aligned. */
const NUMERIC = /^(–|[-+]?\d[\d.,/–]*( ?(ms|s|B|KB|KiB|MiB|%|×))?( \([\w.]+\))?)$/;

/** A plain-text table with aligned columns. */
export function textTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[], isHeader = false): string =>
    headers
      .map((_, i) => {
        const text = cells[i] ?? '';
        return !isHeader && NUMERIC.test(text) ? text.padStart(widths[i]!) : text.padEnd(widths[i]!);
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

/** Prints a command's tables on stdout. */
export function printTables(tables: readonly Table[]): void {
  process.stdout.write(`${tables.map(renderText).join('\n')}\n`);
}

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function renderHtml(table: Table): string {
  const row = (cells: readonly string[], tag: string): string =>
    `<tr>${table.headers.map((_, i) => `<${tag}>${escapeXml(cells[i] ?? '')}</${tag}>`).join('')}</tr>`;
  const body = [row(table.headers, 'th'), ...table.rows.map((cells) => row(cells, 'td'))].join('');
  return (
    `<h2>${escapeXml(table.title)}</h2>` +
    (table.headers.length ? `<table>${body}</table>` : '') +
    (table.notes ?? []).map((note) => `<p>${escapeXml(note)}</p>`).join('')
  );
}

/** A step's phases (history.ts) as table headers, and one row's cells for them. */
export const PHASE_HEADERS = [...PHASES.map((p) => p.replace('model.', 'm.').replace('tool.', 't.')), 'total'];
export const phaseCells = (phases: Partial<Phases> | undefined): string[] =>
  [...PHASES, 'total' as const].map((p) => fmtNum(phases?.[p] ?? Number.NaN));

/** The figures of one load run (load.ts) a table of runs may show, by column. */
export const runCell = {
  wall: (r: LoadRun) => fmtMs(r.wallMs),
  stepsPerSecond: (r: LoadRun) => fmtNum(r.stepsPerSecond),
  p50: (r: LoadRun) => fmtMs(percentile(r.durationsMs, 50)),
  p95: (r: LoadRun) => fmtMs(percentile(r.durationsMs, 95)),
  worker: (r: LoadRun) => fmtNum(r.cpuMsPerStep.worker, 2),
  server: (r: LoadRun) => fmtNum(r.cpuMsPerStep.server, 2),
  bench: (r: LoadRun) => fmtNum(r.cpuMsPerStep.bench, 2),
  others: (r: LoadRun) => fmtNum(r.otherCores, 2),
};
