import { median, memoryOf, resetPeak, round, startServer, tokenFor, withDatabase } from './support.js';
import { seedReport } from './report-seed.js';

// A campaign of 100,000 contacts and 300,000 call attempts on PostgreSQL, read through v1.
// Targets: median at most 50 ms for the report with limit=50, at most 20 ms for a call history page; the
// CSV exports of the contact outcomes (100,000 rows) and the call history (300,000) grow the server's
// memory by less than 100 MB.

const CONTACTS = Number(process.env.BENCH_REPORT_CONTACTS ?? 100_000);
const RUNS = Number(process.env.BENCH_REPORT_RUNS ?? 5);
const REQUESTS = Number(process.env.BENCH_REPORT_REQUESTS ?? 20);
const WARMUP = 3;

/** One CSV export read to its end as a client would: its rows, time and the server's peak memory above idle. */
async function measureExport(url: string, token: string, pid: number) {
  const idle = await memoryOf(pid);
  await resetPeak(pid);
  const started = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200 || !res.body) throw new Error(`${url} answered ${res.status}`);
  let lines = 0;
  let bytes = 0;
  const reader = res.body.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    bytes += read.value.byteLength;
    for (const byte of read.value) if (byte === 10) lines += 1;
  }
  const peak = await memoryOf(pid);
  return {
    rows: lines - 1,
    mb: round(bytes / 1024 / 1024),
    ms: round(performance.now() - started, 0),
    memoryGrowthMb: round(peak.peakMb - idle.rssMb),
  };
}

async function timeRequests(url: string, token: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < WARMUP + REQUESTS; i += 1) {
    const started = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${body.slice(0, 500)}`);
    if (i >= WARMUP) times.push(performance.now() - started);
  }
  return times;
}

/** The median of each run of REQUESTS requests, and the median of those medians. */
async function measure(url: string, token: string) {
  const medians: number[] = [];
  for (let run = 0; run < RUNS; run += 1) medians.push(median(await timeRequests(url, token)));
  return { medianMs: round(median(medians)), runMediansMs: medians.map((m) => round(m)) };
}

export async function benchReport() {
  return withDatabase(async (url) => {
    const server = await startServer(url);
    try {
      const seedStarted = performance.now();
      const seed = await seedReport(url, CONTACTS);
      const seedSeconds = round((performance.now() - seedStarted) / 1000);
      const token = await tokenFor(seed.userId);
      const v1 = `${server.url}/api/v1`;
      const report = await measure(`${v1}/campaigns/${seed.campaignId}/report/?limit=50`, token);
      const history = await measure(`${v1}/campaigns/recordings/?limit=50`, token);
      const lastPage = await measure(`${v1}/campaigns/${seed.campaignId}/report/?limit=50&offset=${CONTACTS - 50}`, token);
      const outcomesCsv = await measureExport(`${v1}/campaigns/${seed.campaignId}/report/?format=csv`, token, server.pid);
      const historyCsv = await measureExport(`${v1}/campaigns/recordings/?format=csv`, token, server.pid);
      const exportsMet = outcomesCsv.memoryGrowthMb < 100 && historyCsv.memoryGrowthMb < 100;
      return {
        name: 'campaign report and call history (REST, PostgreSQL)',
        contacts: seed.contacts,
        attempts: seed.attempts,
        appointments: seed.appointments,
        seedSeconds,
        runs: `${RUNS} x ${REQUESTS} requests`,
        reportMedianMs: report.medianMs,
        reportRunMediansMs: report.runMediansMs.join(' '),
        historyMedianMs: history.medianMs,
        historyRunMediansMs: history.runMediansMs.join(' '),
        reportLastPageMedianMs: lastPage.medianMs,
        outcomesCsv: `${outcomesCsv.rows} rows, ${outcomesCsv.mb} MB in ${outcomesCsv.ms} ms, memory +${outcomesCsv.memoryGrowthMb} MB`,
        historyCsv: `${historyCsv.rows} rows, ${historyCsv.mb} MB in ${historyCsv.ms} ms, memory +${historyCsv.memoryGrowthMb} MB`,
        targets: { reportMedianMs: 50, historyMedianMs: 20, exportMemoryGrowthMb: 100 },
        reportTarget: report.medianMs <= 50 ? 'met' : 'NOT met',
        exportTarget: exportsMet ? 'met' : 'NOT met',
      };
    } finally {
      await server.stop();
    }
  });
}
