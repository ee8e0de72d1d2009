import { BENCH_SECRET, startServer, withDatabase } from '../../bench/support.js';
import { openDatabase } from '../../src/db/database.js';
import { signToken } from '../../src/services/auth.js';
import { seedFixture } from './fixture.js';
import { runFuzz, type FuzzReport } from './runner.js';

// `npm run fuzz`: a production build (`npm run build`, then `node dist/main.js` with NODE_ENV=production,
// as the benchmarks start it) on a fresh PostgreSQL database (BENCH_DATABASE_URL, default the local
// server), seeded with two customers, then FUZZ_REQUESTS generated requests (default 100,000) from
// FUZZ_SEED (default: the time). Prints the counts; exits 1 when any request failed a check.

const runs = Number(process.env.FUZZ_REQUESTS ?? 100_000);
const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);

function print(report: FuzzReport, seconds: number): void {
  // Rows in name order, and every row with the same columns in the same order.
  const sorted = (tallies: Record<string, Record<string, number>>) => {
    const columns = [...new Set(Object.values(tallies).flatMap((tally) => Object.keys(tally)))].sort();
    return Object.fromEntries(
      Object.entries(tallies)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, tally]) => [key, Object.fromEntries(columns.map((column) => [column, tally[column] ?? 0]))]),
    );
  };
  console.log(`\n${report.requests} requests in ${Math.round(seconds)} s (${Math.round(report.requests / seconds)}/s), seed ${seed}`);
  console.table(report.bySurface);
  console.table(report.byStatusClass);
  console.table(sorted(report.byEndpoint));
  console.table(sorted(report.byTransport));
  console.table(report.graphqlErrorCodes);
  console.log(`responses >= 500 or INTERNAL_SERVER_ERROR: ${report.serverErrors}`);
  console.log(`refused requests checked for changed rows: ${report.refusedChecked}; with changed rows: ${report.refusedChangedRows}`);
  console.log(`failures: ${report.failures.length}`);
  for (const failure of report.failures) console.log(failure);
}

const started = Date.now();
const report = await withDatabase(async (databaseUrl) => {
  // No rate limits, so that the requests reach the service rather than a 429; no dialer, so that the
  // database changes only when a request changes it.
  const server = await startServer(databaseUrl, { RATE_LIMIT: 'off', RATE_LIMIT_IMPORT: 'off', RATE_LIMIT_DISPATCH: 'off', DIALER: 'off' });
  // The server logs errors to its stdout; read it, so that a full pipe cannot stall it.
  server.child.stdout!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  const db = await openDatabase({ kind: 'postgres', url: databaseUrl });
  try {
    const fixture = await seedFixture(server.url, db, (sub, role) => signToken(BENCH_SECRET, { sub, role, ttlSeconds: 24 * 3600 }));
    return await runFuzz(
      { url: server.url, sql: db.sql, fixture },
      {
        seed,
        runs,
        onProgress: (progress) => {
          if (progress.requests % 5_000 === 0) {
            const perSecond = Math.round(progress.requests / ((Date.now() - started) / 1000));
            console.log(
              `${progress.requests} requests (${perSecond}/s), ${progress.serverErrors} >= 500, ${progress.failures.length} failures`,
            );
          }
        },
      },
    );
  } finally {
    await db.close();
    await server.stop();
  }
});

print(report, (Date.now() - started) / 1000);
process.exit(report.failures.length > 0 ? 1 : 0);
