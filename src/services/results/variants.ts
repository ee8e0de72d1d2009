import type { VariantRow } from './store.js';

// A campaign's report split by A/B variant, and whether the difference in the share of contacts reached
// is significant: a two-proportion z-test at 95% between the two variants that called the most contacts.

export interface VariantMetrics {
  variantId: string;
  name: string;
  agentId: string;
  weight: number;
  contacts: number;
  attempted: number;
  reached: number;
  /** reached / attempted, 0 to 1 (4 decimals); 0 before anyone was called. */
  reachRate: number;
  appointments: number;
  calls: number;
  /** Mean length of its calls that connected, 1 decimal. */
  averageDurationSeconds: number;
  costCents: bigint;
}

export interface VariantComparison {
  /** The two variants compared (by id), the first with the higher reach rate. */
  variants: [string, string];
  zScore: number;
  pValue: number;
  significant: boolean;
  /** In plain words. */
  statement: string;
}

const round = (value: number, decimals: number) => Math.round(value * 10 ** decimals) / 10 ** decimals;

export function variantMetrics(rows: VariantRow[]): VariantMetrics[] {
  return rows.map((r) => ({
    variantId: r.id,
    name: r.name,
    agentId: r.agentId,
    weight: r.weight,
    contacts: r.contacts,
    attempted: r.attempted,
    reached: r.reached,
    reachRate: r.attempted ? round(r.reached / r.attempted, 4) : 0,
    appointments: r.appointments,
    calls: r.calls,
    averageDurationSeconds: r.connected ? round(Number(r.durationSeconds) / r.connected, 1) : 0,
    costCents: BigInt(r.costCents),
  }));
}

/**
 * The two-proportion z-test of reached / attempted between the two variants that called the most
 * contacts; null with fewer than two variants. Too few calls (or none reached, or all) is "not
 * significant", said so.
 */
export function compareVariants(metrics: VariantMetrics[]): VariantComparison | null {
  if (metrics.length < 2) return null;
  const [a, b] = [...metrics].sort((x, y) => y.attempted - x.attempted).slice(0, 2) as [VariantMetrics, VariantMetrics];
  const [high, low] = a.reachRate >= b.reachRate ? [a, b] : [b, a];
  const pooled = (a.reached + b.reached) / (a.attempted + b.attempted || 1);
  const spread = Math.sqrt(pooled * (1 - pooled) * (1 / (a.attempted || 1) + 1 / (b.attempted || 1)));
  const testable = a.attempted > 0 && b.attempted > 0 && spread > 0;
  const z = testable ? (high.reached / high.attempted - low.reached / low.attempted) / spread : 0;
  const p = testable ? 2 * (1 - normalCdf(Math.abs(z))) : 1;
  const significant = testable && p < 0.05;
  const percent = (m: VariantMetrics) => `${round(m.reachRate * 100, 1)}%`;
  const statement = !testable
    ? `Not enough calls to compare ${high.name} and ${low.name} yet.`
    : `${high.name} reached ${percent(high)} of the contacts it called, ${low.name} ${percent(low)}: ` +
      `the difference is ${significant ? '' : 'not '}significant at 95% (p = ${round(p, 4)}).`;
  return { variants: [high.variantId, low.variantId], zScore: round(z, 4), pValue: round(p, 4), significant, statement };
}

/** The standard normal distribution function, by the Abramowitz and Stegun approximation 7.1.26 of erf (error below 1.5e-7). */
export function normalCdf(x: number): number {
  const t = 1 / (1 + (0.3275911 * Math.abs(x)) / Math.SQRT2);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp(-(x * x) / 2);
  return x >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}
