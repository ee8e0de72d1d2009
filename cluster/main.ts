import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { FULL_TOPOLOGY, stopAll, type Topology } from './cluster.js';
import { chartPng, costPanels } from './chart.js';
import { measureCosts, type CostFigures, type CostPoint } from './costs.js';
import { FAIRNESS, runFairness } from './fairness.js';
import { FULL, oneRun, report, SHORT, type RunResult } from './fault-run.js';

// `npm run cluster [-- --faults] [--short] [--runs N]`: the service as a cluster of network namespaces on
// this machine (docs/cluster.md), a workload of many customers, faults at random moments, then the
// checker. Ends with "N passed, N failed" over the checker's rules of every run; exits 1 on a violation.
// `npm run cluster -- --fairness`: a small campaign's free slot to its next dial, alone and beside
// another customer's 100,000 contacts. `npm run cluster -- --costs [--sizes 1000,10000]`: CPU per
// attempt and per request by topology and calls in flight, as a table, JSON and a PNG chart.

const { values: args } = parseArgs({
  options: {
    faults: { type: 'boolean', default: false },
    short: { type: 'boolean', default: false },
    runs: { type: 'string', default: '1' },
    'fault-rounds': { type: 'string' },
    fairness: { type: 'boolean', default: false },
    costs: { type: 'boolean', default: false },
    sizes: { type: 'string', default: '1000,10000,100000' },
    // Settings of every API instance and worker beside the run's own, for experiments (DIALER_TICKS_AT_ONCE=1).
    set: { type: 'string', multiple: true, default: [] },
    // Every API instance and worker of the costs run writes a V8 CPU profile to its point's folder.
    profile: { type: 'boolean', default: false },
    // Costs runs' figures (costs.json, comma-separated), drawn together into docs/cluster-costs.png.
    chart: { type: 'string' },
  },
});

// Stopped by a signal, the run still removes its hosts and processes.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`${signal}: removing the cluster`);
    void stopAll().finally(() => process.exit(1));
  });
}

const extraEnv = Object.fromEntries(
  args.set.map((setting) => {
    const at = setting.indexOf('=');
    if (at < 1) throw new Error(`--set takes NAME=value, not ${setting}`);
    return [setting.slice(0, at), setting.slice(at + 1)];
  }),
);

const stamp = new Date().toISOString().replace(/[:.]/g, '-');

function folder(name: string): string {
  const dir = `cluster-results/${stamp}/${name}`;
  mkdirSync(dir, { recursive: true });
  return dir;
}

async function faultRuns(): Promise<number> {
  const profile = args.short ? SHORT : FULL;
  const results: RunResult[] = [];
  for (let run = 1; run <= Number(args.runs); run += 1) {
    const logDir = folder(`run-${run}`);
    const result = await oneRun(run, { ...profile, env: { ...profile.env, ...extraEnv } }, logDir, {
      faults: args.faults,
      ...(args['fault-rounds'] ? { faultRounds: Number(args['fault-rounds']) } : {}),
    });
    writeFileSync(`${logDir}/result.json`, JSON.stringify(result, null, 2));
    results.push(result);
  }
  const { passed, failed } = report(results);
  console.log(`${passed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

async function fairness(): Promise<number> {
  const logDir = folder('fairness');
  const result = await runFairness({ ...FAIRNESS, env: { ...FAIRNESS.env, ...extraEnv } }, logDir);
  writeFileSync(`${logDir}/result.json`, JSON.stringify(result, null, 2));
  console.log(`\nfree slot to next dial of a small campaign (${FAIRNESS.smallConcurrency} calls at a time)`);
  console.table(result.delays);
  console.log("the big customer's calls meanwhile");
  console.table(result.load);
  const { p99Ms, maxMs, firstCallMs, slowerThanAlone } = FAIRNESS.bound;
  console.log(
    `bounds beside the big customer: refill p99 <= ${p99Ms} ms and max <= ${maxMs} ms, first call <= ${firstCallMs} ms ` +
      `after dispatch, done within ${slowerThanAlone} x its time alone: ${result.withinBound ? 'held' : 'NOT held'}`,
  );
  return result.withinBound ? 0 : 1;
}

/**
 * Workers 1 to 3 beside 2 API instances, and 1 API instance beside 3 workers, at each size; at 100,000
 * calls in flight the full topology only: the calls placed while filling that many slots end in waves for
 * over an hour, so each point there takes a quarter of an hour and measures the waves more than the
 * topology (docs/cluster.md).
 */
function costTopologies(inFlight: number): Topology[] {
  if (inFlight >= 100_000) return [FULL_TOPOLOGY];
  return [
    { apis: 2, workers: 1 },
    { apis: 2, workers: 2 },
    { apis: 2, workers: 3 },
    { apis: 1, workers: 3 },
  ];
}

async function costs(): Promise<number> {
  const dir = folder('costs');
  const figures: CostFigures[] = [];
  for (const inFlight of args.sizes.split(',').map(Number)) {
    for (const topology of costTopologies(inFlight)) {
      const point: CostPoint = { ...topology, inFlight };
      console.log(`costs: ${inFlight} calls in flight, ${topology.workers} workers, ${topology.apis} API instances`);
      figures.push(
        await measureCosts(point, `${dir}/${inFlight}-w${topology.workers}-a${topology.apis}`, { env: extraEnv, profile: args.profile }),
      );
      console.table([figures.at(-1)]);
      writeFileSync(`${dir}/costs.json`, `${JSON.stringify(figures, null, 2)}\n`);
    }
  }
  writeFileSync(`${dir}/costs.png`, chartPng(costPanels(figures)));
  console.table(figures);
  console.log(`figures and chart in ${dir}/costs.json and costs.png`);
  return 0;
}

/** Draws the figures of one or more costs runs into the docs' chart, with the figures beside it. */
function chart(files: string): number {
  const figures = files.split(',').flatMap((file) => JSON.parse(readFileSync(file, 'utf8')) as CostFigures[]);
  writeFileSync('docs/cluster-costs.json', `${JSON.stringify(figures, null, 2)}\n`);
  writeFileSync('docs/cluster-costs.png', chartPng(costPanels(figures)));
  console.table(figures);
  console.log('wrote docs/cluster-costs.json and docs/cluster-costs.png');
  return 0;
}

async function main(): Promise<number> {
  if (args.chart) return chart(args.chart);
  if (process.getuid?.() !== 0) {
    console.error('npm run cluster makes network namespaces: run it as root.');
    return 1;
  }
  const missing = ['haproxy', 'nft', 'ip'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
  if (missing.length) {
    console.error(`npm run cluster needs ${missing.join(', ')}: apt-get install haproxy nftables iproute2`);
    return 1;
  }
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  if (args.fairness) return fairness();
  if (args.costs) return costs();
  return faultRuns();
}

process.exitCode = await main();
