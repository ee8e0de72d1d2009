import { Resvg } from '@resvg/resvg-js';
import type { CostFigures } from './costs.js';

// The costs as a PNG for the docs: a small SVG of line charts, drawn here and rendered by resvg.

interface Series {
  label: string;
  colour: string;
  points: { x: number; y: number }[];
}

export interface Panel {
  title: string;
  xLabel: string;
  xs: number[];
  /** How a tick on the x axis reads, one or more lines; the number itself unless given. */
  tick?: (x: number) => string[];
  series: Series[];
}

const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd'];
const WIDTH = 420;
const HEIGHT = 350;
const MARGIN = { left: 56, right: 60, top: 40, bottom: 100 };

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A round step for about five ticks up to `max`. */
function tickStep(max: number): number {
  const rough = max / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  return ([1, 2, 2.5, 5, 10].map((m) => m * power).find((step) => step >= rough) ?? 10 * power) as number;
}

function panelSvg(panel: Panel, offsetX: number): string {
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const yMax = Math.max(...panel.series.flatMap((s) => s.points.map((p) => p.y))) * 1.15 || 1;
  const step = tickStep(yMax);
  const top = Math.ceil(yMax / step) * step;
  const xAt = (x: number) => {
    const i = panel.xs.indexOf(x);
    return MARGIN.left + (panel.xs.length === 1 ? plotW / 2 : (i / (panel.xs.length - 1)) * plotW);
  };
  const yAt = (y: number) => MARGIN.top + plotH - (y / top) * plotH;
  const parts: string[] = [`<g transform="translate(${offsetX},0)">`];
  parts.push(`<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="14" font-weight="bold">${escape(panel.title)}</text>`);
  for (let y = 0; y <= top + 1e-9; y += step) {
    parts.push(`<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${yAt(y)}" y2="${yAt(y)}" stroke="#ddd"/>`);
    parts.push(`<text x="${MARGIN.left - 6}" y="${yAt(y) + 4}" text-anchor="end" font-size="11">${Number(y.toFixed(3))}</text>`);
  }
  for (const x of panel.xs) {
    const lines = panel.tick?.(x) ?? [String(x)];
    const spans = lines.map((line, i) => `<tspan x="${xAt(x)}" dy="${i ? 13 : 0}">${escape(line)}</tspan>`).join('');
    parts.push(`<text x="${xAt(x)}" y="${HEIGHT - MARGIN.bottom + 16}" text-anchor="middle" font-size="11">${spans}</text>`);
  }
  parts.push(
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - MARGIN.bottom + 46}" text-anchor="middle" font-size="12">${escape(panel.xLabel)}</text>`,
  );
  parts.push(`<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#888"/>`);
  for (const series of panel.series) {
    const path = series.points.map((p, i) => `${i ? 'L' : 'M'}${xAt(p.x)},${yAt(p.y)}`).join(' ');
    parts.push(`<path d="${path}" fill="none" stroke="${series.colour}" stroke-width="2"/>`);
    for (const p of series.points) parts.push(`<circle cx="${xAt(p.x)}" cy="${yAt(p.y)}" r="3.5" fill="${series.colour}"/>`);
  }
  panel.series.forEach((series, i) => {
    const x = MARGIN.left + (i % 2) * 160;
    const y = HEIGHT - 30 + Math.floor(i / 2) * 16;
    parts.push(`<line x1="${x}" x2="${x + 18}" y1="${y - 4}" y2="${y - 4}" stroke="${series.colour}" stroke-width="2"/>`);
    parts.push(`<text x="${x + 22}" y="${y}" font-size="11">${escape(series.label)}</text>`);
  });
  parts.push('</g>');
  return parts.join('\n');
}

const thousands = (n: number) => (n >= 1000 ? `${n / 1000}k` : String(n));

/**
 * Dialer CPU per attempt by workers, API CPU per request by API instances, PostgreSQL per attempt by
 * size. Each size is labelled with the attempts a second its points ran at (their median): the cost of
 * an attempt depends on it, since fixed work each second is shared by more attempts and batches grow.
 */
export function costPanels(figures: CostFigures[]): Panel[] {
  const sizes = [...new Set(figures.map((f) => f.inFlight))].sort((a, b) => a - b);
  const rateOf = (size: number) => {
    const rates = figures.filter((f) => f.inFlight === size).map((f) => f['attempts/s']);
    return rates.sort((a, b) => a - b)[Math.floor(rates.length / 2)];
  };
  const sizeLabel = (size: number) => `${thousands(size)}, ${rateOf(size)} attempts/s`;
  const maxApis = Math.max(...figures.map((f) => f.apis));
  const maxWorkers = Math.max(...figures.map((f) => f.workers));
  const xsOf = (values: number[]) => [...new Set(values)].sort((a, b) => a - b);
  /** A panel of one series per size, over the figures `pick` keeps, `x` against `y`. */
  const bySize = (
    title: string,
    xLabel: string,
    pick: (f: CostFigures) => boolean,
    x: (f: CostFigures) => number,
    y: (f: CostFigures) => number,
  ): Panel => ({
    title,
    xLabel,
    xs: xsOf(figures.filter(pick).map(x)),
    series: sizes.map((size, i) => ({
      label: sizeLabel(size),
      colour: COLOURS[i % COLOURS.length]!,
      points: figures
        .filter((f) => f.inFlight === size && pick(f))
        .map((f) => ({ x: x(f), y: y(f) }))
        .sort((a, b) => a.x - b.x),
    })),
  });
  const full = figures.filter((f) => f.apis === maxApis && f.workers === maxWorkers);
  return [
    bySize(
      'Dialer CPU per call attempt (ms)',
      `dialer workers (${maxApis} API instances)`,
      (f) => f.apis === maxApis,
      (f) => f.workers,
      (f) => f['dialer CPU ms/attempt'],
    ),
    bySize(
      'API CPU per request (ms)',
      `API instances (${maxWorkers} workers)`,
      (f) => f.workers === maxWorkers,
      (f) => f.apis,
      (f) => f['API CPU ms/request'],
    ),
    {
      title: 'PostgreSQL CPU per call attempt (ms)',
      xLabel: `calls in flight (${maxWorkers} workers, ${maxApis} API instances)`,
      xs: xsOf(full.map((f) => f.inFlight / 1000)),
      tick: (x) => [thousands(x * 1000), `${rateOf(x * 1000)} attempts/s`],
      series: [
        {
          label: 'PostgreSQL',
          colour: COLOURS[3]!,
          points: full.map((f) => ({ x: f.inFlight / 1000, y: f['PostgreSQL CPU ms/attempt'] })).sort((a, b) => a.x - b.x),
        },
      ],
    },
  ];
}

export function chartPng(panels: Panel[]): Buffer {
  const width = WIDTH * panels.length;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${HEIGHT}" font-family="DejaVu Sans, sans-serif">
<rect width="100%" height="100%" fill="white"/>
${panels.map((panel, i) => panelSvg(panel, i * WIDTH)).join('\n')}
</svg>`;
  return new Resvg(svg, { font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' } }).render().asPng();
}
