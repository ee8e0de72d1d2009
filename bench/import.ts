import { randomUUID } from 'node:crypto';
import { cpuMsOf, memoryOf, median, postgresCpuBetween, postgresCpuMs, round, startServer, tokenFor, withDatabase } from './support.js';

// Issue 3: import 100,000 rows through POST /api/v1/contacts/import/ on PostgreSQL.
// Targets: at most 3 s for the request, at most 400 MB peak memory of the server process.

const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 100_000);
const RUNS = Number(process.env.BENCH_IMPORT_RUNS ?? 5);

function rows(count: number) {
  const first = ['Ada', 'Alan', 'Grace', 'Katherine', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Ken', 'Radia'];
  const last = ['Lovelace', 'Turing', 'Hopper', 'Johnson', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Thompson', 'Perlman'];
  const formats = [
    (n: string) => `(${n.slice(0, 3)}) ${n.slice(3, 6)}-${n.slice(6)}`,
    (n: string) => `+1 ${n.slice(0, 3)} ${n.slice(3, 6)} ${n.slice(6)}`,
    (n: string) => `${n.slice(0, 3)}.${n.slice(3, 6)}.${n.slice(6)}`,
  ];
  const areas = ['415', '650', '212', '312', '617', '206', '303', '512'];
  return Array.from({ length: count }, (_, i) => {
    const number = `${areas[i % areas.length]}${String(200 + ((i >> 3) % 700)).padStart(3, '0')}${String(i % 10_000).padStart(4, '0')}`;
    return {
      'First Name': first[i % 10],
      'Last Name': last[(i >> 1) % 10],
      Phone: formats[i % 3]!(number),
      Email: `person${i}@example.com`,
      Company: `Company ${i % 500}`,
      'Lead Source': i % 2 ? 'web' : 'event',
    };
  });
}

export async function benchImport() {
  return withDatabase(async (url) => {
    const server = await startServer(url, { IMPORT_MAX_ROWS: String(ROWS) });
    const database = new URL(url).pathname.slice(1);
    try {
      const token = await tokenFor(randomUUID());
      const body = JSON.stringify({ groupName: 'Bench import', csvData: rows(ROWS) });
      const idle = await memoryOf(server.pid);
      const times: number[] = [];
      const serverCpu: number[] = [];
      const postgresCpu: number[] = [];
      let imported = 0;
      for (let run = 0; run < RUNS; run += 1) {
        const serverBefore = await cpuMsOf(server.pid);
        const postgresBefore = await postgresCpuMs(database);
        const started = performance.now();
        const res = await fetch(`${server.url}/api/v1/contacts/import/`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body,
        });
        const result = (await res.json()) as { totalImported: number };
        times.push(performance.now() - started);
        serverCpu.push((await cpuMsOf(server.pid)) - serverBefore);
        postgresCpu.push(postgresCpuBetween(postgresBefore, await postgresCpuMs(database)));
        if (res.status !== 201) throw new Error(`import answered ${res.status}: ${JSON.stringify(result)}`);
        imported = result.totalImported;
      }
      const memory = await memoryOf(server.pid);
      return {
        name: 'contacts import (REST, PostgreSQL)',
        rows: ROWS,
        bodyMb: round(body.length / 1024 / 1024),
        runs: RUNS,
        imported,
        medianMs: round(median(times), 0),
        minMs: round(Math.min(...times), 0),
        maxMs: round(Math.max(...times), 0),
        serverCpuMs: round(median(serverCpu), 0),
        postgresCpuMs: round(median(postgresCpu), 0),
        idleRssMb: round(idle.rssMb),
        peakRssMb: round(memory.peakMb),
        targets: { medianMs: 3000, peakRssMb: 400 },
      };
    } finally {
      await server.stop();
    }
  });
}
