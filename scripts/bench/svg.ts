// Minimal SVG charts (grouped bars, stacked bars) as strings, for a report that needs no network and no
// dependency: every chart is a self-contained <svg> with its title, axes, ticks and legend.

export interface Series {
  name: string;
  color: string;
  values: number[];
}

interface Frame {
  title: string;
  yLabel: string;
  width?: number;
  height?: number;
}

export const PALETTE = [
  '#3366cc',
  '#dc7633',
  '#2e8b57',
  '#8e44ad',
  '#c0392b',
  '#16a085',
  '#7f8c8d',
  '#d4ac0d',
  '#2c3e50',
];

const M = { top: 34, right: 16, bottom: 52, left: 64 };

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A "nice" upper bound (1, 2, 2.5, 5 × 10^k) at or above `max`, and the tick step. */
export function niceScale(max: number, ticks = 5): { top: number; step: number } {
  if (!Number.isFinite(max) || max <= 0) return { top: 1, step: 0.2 };
  const raw = max / ticks;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  return { top: Math.ceil(max / step - 1e-9) * step, step };
}

function short(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e6) return `${+(value / 1e6).toFixed(1)}M`;
  if (abs >= 1e4) return `${+(value / 1e3).toFixed(0)}k`;
  if (abs >= 1e3) return `${+(value / 1e3).toFixed(1)}k`;
  if (abs >= 10 || abs === 0) return `${+value.toFixed(0)}`;
  return `${+value.toFixed(2)}`;
}

function frame(
  f: Frame,
  top: number,
  step: number,
  body: string,
  legend: { name: string; color: string }[],
  xAxis: string,
): string {
  const width = f.width ?? 640;
  const height = f.height ?? 320;
  const plotH = height - M.top - M.bottom;
  const plotW = width - M.left - M.right;
  const y = (v: number): number => M.top + plotH - (v / top) * plotH;
  const grid: string[] = [];
  for (let v = 0; v <= top + 1e-9; v += step) {
    grid.push(
      `<line x1="${M.left}" x2="${M.left + plotW}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#e5e5e5"/>` +
        `<text x="${M.left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${short(v)}</text>`,
    );
  }
  // The legend wraps onto more rows below the chart when it does not fit on one.
  let lx = M.left;
  let row = 0;
  const legendItems = legend.map((item) => {
    const itemWidth = 24 + item.name.length * 6.5;
    if (lx + itemWidth > width - M.right && lx > M.left) {
      lx = M.left;
      row++;
    }
    const ly = height - 16 + row * 16;
    const g = `<rect x="${lx.toFixed(1)}" y="${ly}" width="10" height="10" fill="${item.color}"/><text x="${(lx + 14).toFixed(1)}" y="${ly + 9}">${escapeXml(item.name)}</text>`;
    lx += itemWidth;
    return g;
  });
  const fullHeight = height + row * 16;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${fullHeight}" viewBox="0 0 ${width} ${fullHeight}" font-family="system-ui, sans-serif" font-size="11">` +
    `<text x="${M.left}" y="18" font-size="13" font-weight="600">${escapeXml(f.title)}</text>` +
    grid.join('') +
    `<text transform="translate(14 ${M.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escapeXml(f.yLabel)}</text>` +
    body +
    xAxis +
    legendItems.join('') +
    '</svg>'
  );
}

/**
 * Bars per category, one per series: side by side, each with its value on top; or `stacked`, the series as the
 * segments of one bar labelled with its total.
 */
export function bars(f: Frame & { categories: string[]; series: Series[]; stacked?: boolean }): string {
  const width = f.width ?? 640;
  const height = f.height ?? 320;
  const plotW = width - M.left - M.right;
  const plotH = height - M.top - M.bottom;
  const value = (s: Series, ci: number): number => (Number.isFinite(s.values[ci]) ? Math.max(0, s.values[ci]!) : 0);
  const heights = f.categories.map((_, ci) =>
    f.stacked ? f.series.reduce((sum, s) => sum + value(s, ci), 0) : Math.max(0, ...f.series.map((s) => value(s, ci))),
  );
  const { top, step } = niceScale(Math.max(0, ...heights));
  const y = (v: number): string => (M.top + plotH - (v / top) * plotH).toFixed(1);
  const slot = plotW / Math.max(1, f.categories.length);
  const barW = f.stacked ? Math.min(56, slot * 0.7) : Math.min(48, (slot * 0.8) / Math.max(1, f.series.length));
  const label = (x: number, v: number, at: number): string =>
    `<text x="${x.toFixed(1)}" y="${(Number(y(at)) - 3).toFixed(1)}" text-anchor="middle" font-size="10">${short(v)}</text>`;
  const shapes: string[] = [];
  f.categories.forEach((category, ci) => {
    const start = M.left + ci * slot + (slot - barW * (f.stacked ? 1 : f.series.length)) / 2;
    let base = 0;
    f.series.forEach((s, si) => {
      const v = s.values[ci];
      if (v === undefined || !Number.isFinite(v) || (f.stacked && v <= 0)) return;
      const x = f.stacked ? start : start + si * barW;
      const from = f.stacked ? base : 0;
      shapes.push(
        `<rect x="${x.toFixed(1)}" y="${y(from + v)}" width="${(barW - (f.stacked ? 0 : 2)).toFixed(1)}" height="${((v / top) * plotH).toFixed(1)}" fill="${s.color}"><title>${escapeXml(`${category} · ${s.name}: ${+v.toFixed(2)}`)}</title></rect>`,
      );
      if (!f.stacked) shapes.push(label(x + barW / 2 - 1, v, v));
      base += v;
    });
    if (f.stacked) shapes.push(label(start + barW / 2, heights[ci]!, heights[ci]!));
  });
  const every = Math.ceil(f.categories.length / 24);
  const xAxis = f.categories
    .map((c, ci) =>
      ci % every === 0
        ? `<text x="${(M.left + ci * slot + slot / 2).toFixed(1)}" y="${M.top + plotH + 14}" text-anchor="middle">${escapeXml(c)}</text>`
        : '',
    )
    .join('');
  return frame(f, top, step, shapes.join(''), f.series, xAxis);
}
