import { median, round, startServer, tokenFor, withDatabase } from './support.js';
import { seedReport } from './report-seed.js';

// A campaign of 100,000 contacts and 300,000 call attempts on PostgreSQL, read through v1.
// Targets: median at most 50 ms for the report with limit=50, at most 20 ms for a call history page.

const CONTACTS = Number(process.env.BENCH_REPORT_CONTACTS ?? 100_000);
const RUNS = Number(process.env.BENCH_REPORT_RUNS ?? 5);
const REQUESTS = Number(process.env.BENCH_REPORT_REQUESTS ?? 20);
const WARMUP = 3;

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
        targets: { reportMedianMs: 50, historyMedianMs: 20 },
        reportTarget: report.medianMs <= 50 ? 'met' : 'NOT met',
      };
    } finally {
      await server.stop();
    }
  });
}
