import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { statement } from '../src/db/sql.js';
import { openDatabase } from '../src/db/database.js';
import { systemClock } from '../src/services/context.js';
import { importRegistry } from '../src/services/registries/registries.js';
import { lookUp, registryOf } from '../src/services/registries/store.js';
import { memoryOf, resetPeak, round, withDatabase } from './support.js';

// Issue 34 §2: a national registry of tens of millions of numbers is imported in minutes (streamed, with
// bounded memory), and a lookup in the dial path stays flat as the registry grows. For each size in
// BENCH_REGISTRY_NUMBERS (default 1,000,000 and 10,000,000) on a database of its own: a US DNC file is
// generated, imported through the same service as the CLI, and looked up 20,000 times (half the numbers
// on the registry, half not), through the same SQL fragment the dialer's claim uses.

const SIZES = (process.env.BENCH_REGISTRY_NUMBERS ?? '1000000,10000000').split(',').map(Number);
const LOOKUPS = Number(process.env.BENCH_REGISTRY_LOOKUPS ?? 20_000);

/** The i-th number of a generated file: every i gives another valid NANP number, spread over 800 area codes. */
function nanpNumber(i: number): string {
  const area = 200 + (i % 800);
  const rest = Math.floor(i / 800);
  const exchange = 200 + (rest % 800);
  const line = Math.floor(rest / 800);
  return `${area}${exchange}${String(line).padStart(4, '0')}`;
}

async function generate(path: string, count: number): Promise<void> {
  const out = createWriteStream(path);
  const batch = 100_000;
  for (let start = 0; start < count; start += batch) {
    const lines: string[] = [];
    for (let i = start; i < Math.min(count, start + batch); i += 1) lines.push(nanpNumber(i));
    if (!out.write(`${lines.join('\n')}\n`)) await once(out, 'drain');
  }
  out.end();
  await finished(out);
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

const sizeStatement = statement<{ bytes: string }>(
  'bench.registry_size',
  `SELECT pg_total_relation_size('registry_numbers_us_dnc')::text AS bytes`,
);

// The plan of the claim's lookup: one index probe of each partition, never a scan of its rows.
const planStatement = statement<{ 'QUERY PLAN': string }>('bench.registry_plan', `EXPLAIN SELECT ${registryOf("'+12025550123'")}`);

async function benchSize(count: number) {
  const file = join(tmpdir(), `registry-bench-${process.pid}-${count}.txt`);
  const generating = performance.now();
  await generate(file, count);
  const generateSeconds = (performance.now() - generating) / 1000;
  try {
    return await withDatabase(async (url) => {
      const db = await openDatabase({ kind: 'postgres', url });
      try {
        await db.migrate();
        await resetPeak(process.pid);
        const started = performance.now();
        const copy = await importRegistry(
          { sql: db.sql, clock: systemClock },
          { registry: 'us_dnc', downloaded_on: new Date().toISOString().slice(0, 10) },
          createReadStream(file, { highWaterMark: 1 << 20 }),
          'bench',
        );
        const importSeconds = (performance.now() - started) / 1000;
        const { peakMb } = await memoryOf(process.pid);
        if (copy.numbers !== BigInt(count)) throw new Error(`imported ${copy.numbers} numbers, not ${count}`);
        // Warm the connection's prepared statement, then time lookups of numbers on it and not.
        const times: number[] = [];
        let found = 0;
        for (let i = 0; i < LOOKUPS + 100; i += 1) {
          const listed = i % 2 === 0;
          const index = Math.floor(Math.random() * count);
          // No generated number ends in 9999 (its last four digits count the 640,000s).
          const number = `+1${listed ? nanpNumber(index) : `${nanpNumber(index).slice(0, 6)}9999`}`;
          const t = performance.now();
          const registry = await lookUp(db.sql, number);
          if (i < 100) continue;
          times.push(performance.now() - t);
          if (registry) found += 1;
        }
        times.sort((a, b) => a - b);
        const [size] = await db.sql.run(sizeStatement);
        const plan = (await db.sql.run(planStatement)).map((row) => row['QUERY PLAN']).join('\n');
        const scans = [...plan.matchAll(/(Index Only Scan|Index Scan|Seq Scan|Bitmap Heap Scan)/g)].map((m) => m[1]);
        return {
          numbers: count,
          generateSeconds: round(generateSeconds),
          importSeconds: round(importSeconds),
          numbersPerSecond: Math.round(count / importSeconds),
          importPeakRssMb: round(peakMb),
          tableAndIndexMb: round(Number(size!.bytes) / 1024 / 1024),
          lookupPlan: [...new Set(scans)].join(', '),
          lookupP50Ms: round(percentile(times, 0.5), 3),
          lookupP99Ms: round(percentile(times, 0.99), 3),
          lookupsFound: found,
        };
      } finally {
        await db.close();
      }
    });
  } finally {
    await rm(file, { force: true });
  }
}

export async function benchRegistry() {
  const sizes = [];
  for (const count of SIZES) {
    console.log(`  registry of ${count} numbers ...`);
    sizes.push(await benchSize(count));
  }
  const largest = sizes.at(-1)!;
  return {
    name: 'registry',
    lookups: LOOKUPS,
    // From the largest size measured, at its rate: what 50 million numbers would take.
    fiftyMillionImportMinutes: round(50_000_000 / largest.numbersPerSecond / 60),
    fiftyMillionMeasured: sizes.some((s) => s.numbers >= 50_000_000),
    sizes,
  };
}
