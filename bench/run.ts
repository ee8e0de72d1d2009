import { mkdir, writeFile } from 'node:fs/promises';
import { benchBrain } from './brain.js';
import { benchDialer } from './dialer.js';
import { benchImport } from './import.js';
import { benchLoad } from './load.js';
import { benchPreview } from './preview.js';
import { benchRegistry } from './registry.js';
import { benchReport } from './report.js';
import { benchScale } from './scale.js';
import { benchStartup } from './startup.js';

// `npm run bench`: every benchmark on PostgreSQL (BENCH_DATABASE_URL, default the local server; startup
// times `npm start` on the embedded database), a table on stdout and the figures as JSON in
// bench-results/. Pick some with `npm run bench -- import`.

const all = {
  load: benchLoad,
  import: benchImport,
  report: benchReport,
  dialer: benchDialer,
  brain: benchBrain,
  preview: benchPreview,
  registry: benchRegistry,
  startup: benchStartup,
} as const;
// Run only when asked for by name: it builds tables of up to 10^7 contacts and takes many minutes.
const onRequest = { scale: benchScale } as const;
const benches = { ...all, ...onRequest };
const wanted = process.argv.slice(2).filter((a) => a in benches) as (keyof typeof benches)[];
const names = wanted.length ? wanted : (Object.keys(all) as (keyof typeof all)[]);

const results: Record<string, unknown>[] = [];
for (const name of names) {
  console.log(`running ${name} ...`);
  const result = await benches[name]();
  results.push(result);
  // Lists (one row per scenario) print as tables of their own.
  const lists = Object.entries(result).filter(([, value]) => Array.isArray(value));
  console.table(Object.fromEntries(Object.entries(result).filter(([, value]) => !Array.isArray(value))));
  for (const [, rows] of lists) console.table(rows);
}
await mkdir('bench-results', { recursive: true });
const file = `bench-results/${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
const report = { machine: { node: process.version, cpus: (await import('node:os')).cpus().length }, results };
await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
await writeFile('bench-results/latest.json', `${JSON.stringify(report, null, 2)}\n`);
console.log(`wrote ${file}`);
process.exit(0);
