// Number formatting shared by the text table and the HTML report.

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (Math.abs(ms) >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (Math.abs(ms) >= 100) return `${ms.toFixed(0)} ms`;
  return `${ms.toFixed(1)} ms`;
}

export function pct(fraction: number): string {
  return Number.isFinite(fraction) ? `${(fraction * 100).toFixed(1)}%` : '–';
}

export function fmtBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '–';
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  if (bytes >= 10 * 1024) return `${(bytes / 1024).toFixed(0)} KiB`;
  return `${Math.round(bytes)} B`;
}

export function fmtNum(value: number, digits = 1): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '–';
}

export function fmtRatio(value: number, digits = 2): string {
  return Number.isFinite(value) ? `${value.toFixed(digits)}×` : '–';
}
