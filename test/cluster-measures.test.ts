import { describe, expect, it } from 'vitest';
import { chartPng, costPanels } from '../cluster/chart.js';
import { underWayAt } from '../cluster/checker.js';
import type { CostFigures } from '../cluster/costs.js';
import { delayFigures, refillDelays } from '../cluster/fairness.js';
import { othersPause } from '../cluster/fault-run.js';

// The cluster's measurements are only as good as their arithmetic: the fairness run's slot-to-next-dial
// delays and the costs chart, checked on figures worked out by hand.

const call = (placed: number, ended: number | null, worker = 'w1') => ({
  attemptId: `${placed}`,
  worker,
  placedAt: new Date(placed),
  endedAt: ended === null ? null : new Date(ended),
});

describe('refill delays', () => {
  it('pairs the k-th end with the (concurrency + k)-th start', () => {
    // Two slots: calls at 0 and 10 fill them; the ends at 100 and 150 free them, refilled at 130 and 150.
    const calls = [call(0, 100), call(10, 150), call(130, 400), call(150, 300)];
    expect(refillDelays(calls, 2)).toEqual([30, 0]);
  });

  it('counts only the slots freed before the cut-off, and none whose refill never came', () => {
    const calls = [call(0, 100), call(10, 150), call(130, 400)];
    expect(refillDelays(calls, 2)).toEqual([30]);
    expect(refillDelays([call(0, 100), call(10, 150), call(130, 400), call(160, null)], 2, 120)).toEqual([30]);
  });

  it('reports percentiles as the smallest delay at or above that share of slots', () => {
    const figures = delayFigures([5, 1, 4, 2, 3, 10, 9, 8, 7, 6]);
    expect(figures).toEqual({ slots: 10, 'p50 (ms)': 5, 'p90 (ms)': 9, 'p99 (ms)': 10, 'max (ms)': 10 });
    expect(delayFigures([])).toMatchObject({ slots: 0, 'max (ms)': 0 });
  });
});

describe("the other workers' longest pause during a worker's fault", () => {
  const fault = { target: 'w2', startedAt: 1000, endedAt: 5000 };

  it('is the longest time in the fault with no call placed by another worker, its ends included', () => {
    const calls = [call(900, null, 'w1'), call(1500, null, 'w1'), call(2000, null, 'w2'), call(4000, null, 'w3'), call(5200, null, 'w3')];
    expect(othersPause(calls, fault)).toBe(2500);
  });

  it('is the whole fault when nobody else dialed', () => {
    expect(othersPause([call(2000, null, 'w2')], fault)).toBe(4000);
  });
});

describe('calls under way when a fault began', () => {
  it('counts calls placed by then and not yet ended, a call with no logged end ending when its worker was killed', () => {
    const kill = {
      kind: 'kill-worker' as const,
      target: 'w2',
      startedAt: 3000,
      endedAt: 3100,
      recoveredAt: null,
      recoveryMs: null,
      what: '',
    };
    const calls = [call(500, 900), call(1000, 2500), call(1500, null), call(2000, null, 'w2'), call(2600, 4000)];
    expect(underWayAt(calls, [kill], 2500)).toBe(2);
    expect(underWayAt(calls, [kill], 3500)).toBe(2);
    expect(underWayAt(calls, [kill], 5000)).toBe(1);
  });
});

describe('the costs chart', () => {
  const point = (workers: number, apis: number, inFlight: number, dialer: number, api: number): CostFigures => ({
    workers,
    apis,
    inFlight,
    'attempts/s': 100,
    'calls in flight (median)': inFlight,
    'dialer CPU ms/attempt': dialer,
    'PostgreSQL CPU ms/attempt': 5,
    'requests/s': 50,
    'API CPU ms/request': api,
    'non-2xx answers': 0,
    'not served': 0,
  });
  const figures = [point(1, 2, 1000, 2, 6), point(3, 2, 1000, 4, 6.5), point(3, 1, 1000, 4, 5), point(3, 2, 10000, 3, 6)];

  it('draws dialer CPU by workers at the most API instances, and API CPU by instances at the most workers', () => {
    const [dialer, api, postgres] = costPanels(figures);
    expect(dialer!.xs).toEqual([1, 3]);
    expect(dialer!.series.map((s) => [s.label, s.points])).toEqual([
      [
        '1k, 100 attempts/s',
        [
          { x: 1, y: 2 },
          { x: 3, y: 4 },
        ],
      ],
      ['10k, 100 attempts/s', [{ x: 3, y: 3 }]],
    ]);
    expect(api!.series[0]!.points).toEqual([
      { x: 1, y: 5 },
      { x: 2, y: 6.5 },
    ]);
    expect(postgres!.series[0]!.points).toEqual([
      { x: 1, y: 5 },
      { x: 10, y: 5 },
    ]);
  });

  it('renders a PNG', () => {
    const png = chartPng(costPanels(figures));
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
  });
});
