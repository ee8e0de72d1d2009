import fc from 'fast-check';
import { maxHeaderSize } from 'node:http';
import type { SqlSession } from '../../src/db/sql.js';
import { changedTables, fingerprint, type Fingerprint } from '../support/fingerprint.js';
import { IdPool, type Fixture } from './fixture.js';
import { graphqlPlans } from './graphql.js';
import { bearer, send, type HttpResponse } from './http.js';
import { describe, type Caller, type Plan } from './plan.js';
import { v1Plans } from './v1.js';
import { testSql } from '../support/sql.js';

// The fuzz: generated requests, one at a time, against a running server, each checked for what no
// request may do: answer 500 (or INTERNAL_SERVER_ERROR), stop the server answering, or change a row
// of the database when it is refused.

export interface FuzzTarget {
  url: string;
  /** The server's database, read for ids and fingerprints. */
  sql: SqlSession;
  fixture: Fixture;
}

export interface Failure {
  problem: 'server error' | 'no answer' | 'server down' | 'refused request changed rows';
  request: string;
  status: number;
  detail: string;
}

type Tally = Record<string, number>;

export interface FuzzReport {
  requests: number;
  bySurface: Tally;
  byStatusClass: Tally;
  /** Status classes, and `refused`: requests refused as a whole (for GraphQL, whatever the HTTP status). */
  byEndpoint: Record<string, Tally>;
  byTransport: Record<string, Tally>;
  graphqlErrorCodes: Tally;
  /** Refused requests whose database was compared before and after. */
  refusedChecked: number;
  /** Refused requests after which some table differed. */
  refusedChangedRows: number;
  serverErrors: number;
  failures: Failure[];
}

/** Any request, v1 or GraphQL, in proportion to how many endpoints each surface has. */
const plans = fc.oneof({ arbitrary: v1Plans, weight: 2 }, { arbitrary: graphqlPlans, weight: 3 });

const FORGED_TOKEN = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
const BATCH = 250;
const KEPT_FAILURES = 50;

/**
 * The database's content, read again only when a write may have happened since the last reading: a
 * transaction that writes takes a new transaction id, and reading the next one to be given costs almost
 * nothing. Other databases on the same server take ids too; then the content is simply read again.
 */
class ContentWatch {
  private lastXid = '';
  private last: Fingerprint = {};

  constructor(private readonly sql: SqlSession) {}

  async read(): Promise<Fingerprint> {
    const [row] = await testSql(this.sql).query<{ xid: string }>('SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xid');
    if (row!.xid !== this.lastXid) {
      this.last = await fingerprint(this.sql);
      this.lastXid = row!.xid;
    }
    return this.last;
  }
}

const statusClass = (status: number) => (status === 0 ? 'no answer' : `${Math.floor(status / 100)}xx`);

/**
 * Node's HTTP parser answers a request line and headers beyond its limit with 431 and closes the
 * connection at once, before the application sees the request; a client still writing its body then
 * finds the connection reset instead of reading the 431.
 */
const TOO_LARGE_FOR_NODE = '431 from the HTTP parser';
const bump = (tally: Tally, key: string) => (tally[key] = (tally[key] ?? 0) + 1);

/** Whether the request was refused as a whole: not a success, or a GraphQL root field that did not run. */
function refused(plan: Plan, response: HttpResponse): boolean {
  if (response.status < 200 || response.status >= 300) return true;
  if (plan.surface !== 'graphql') return false;
  const errors: { path?: unknown[] }[] = response.json?.errors ?? [];
  const field = plan.endpoint.split('.')[1]!;
  // An error below the root field means the field itself ran (a mutation did its work) and a part of
  // what it answered failed.
  return errors.length > 0 && response.json?.data?.[field] == null && errors.every((error) => (error.path?.length ?? 0) <= 1);
}

export async function runFuzz(
  target: FuzzTarget,
  options: { seed: number; runs: number; onProgress?: (report: FuzzReport) => void },
): Promise<FuzzReport> {
  const report: FuzzReport = {
    requests: 0,
    bySurface: {},
    byStatusClass: {},
    byEndpoint: {},
    byTransport: {},
    graphqlErrorCodes: {},
    refusedChecked: 0,
    refusedChangedRows: 0,
    serverErrors: 0,
    failures: [],
  };
  const { alice, bob, admin } = target.fixture;
  const parties: Record<Caller, { self: string; other: string; token: string | undefined }> = {
    alice: { self: alice.id, other: bob.id, token: alice.token },
    bob: { self: bob.id, other: alice.id, token: bob.token },
    admin: { self: alice.id, other: bob.id, token: admin.token },
    anonymous: { self: alice.id, other: bob.id, token: undefined },
    forged: { self: alice.id, other: bob.id, token: FORGED_TOKEN },
  };
  const fail = (failure: Failure) => {
    if (report.failures.length < KEPT_FAILURES) report.failures.push(failure);
  };
  const watch = new ContentWatch(target.sql);

  for (let batch = 0; report.requests < options.runs; batch += 1) {
    const pool = await IdPool.load(target.sql);
    for (const plan of fc.sample(plans, { seed: options.seed + batch, numRuns: Math.min(BATCH, options.runs - report.requests) })) {
      const party = parties[plan.caller];
      const request = plan.build((ref) => pool.idOf(ref, party.self, party.other));
      request.headers = { ...request.headers, ...bearer(party.token) };
      const shown = () => describe(plan, request);

      const before = await watch.read();
      const response = await send(target.url, request);
      report.requests += 1;
      const overlong = response.status === 0 && request.path.length > maxHeaderSize;
      const status = overlong ? TOO_LARGE_FOR_NODE : statusClass(response.status);
      bump(report.bySurface, plan.surface);
      bump(report.byStatusClass, status);
      bump((report.byEndpoint[plan.endpoint] ??= {}), status);
      bump((report.byTransport[`${plan.surface} ${plan.transport}`] ??= {}), status);
      const codes: string[] =
        plan.surface === 'graphql'
          ? (response.json?.errors ?? []).map((e: { extensions?: { code?: string } }) => e.extensions?.code ?? '(none)')
          : [];
      for (const code of new Set(codes)) bump(report.graphqlErrorCodes, code);

      if (response.status === 0 && !overlong) fail({ problem: 'no answer', request: shown(), status: 0, detail: response.text });
      if (response.status >= 500 || codes.includes('INTERNAL_SERVER_ERROR')) {
        report.serverErrors += 1;
        fail({ problem: 'server error', request: shown(), status: response.status, detail: response.text.slice(0, 500) });
      }
      const health = await send(target.url, { method: 'GET', path: '/healthz', headers: {} }, 10_000);
      if (health.status !== 200) {
        fail({ problem: 'server down', request: shown(), status: health.status, detail: health.text });
        return report;
      }
      if (refused(plan, response)) {
        bump(report.byEndpoint[plan.endpoint]!, 'refused');
        report.refusedChecked += 1;
        const changed = changedTables(before, await watch.read());
        if (changed.length > 0) {
          report.refusedChangedRows += 1;
          fail({
            problem: 'refused request changed rows',
            request: shown(),
            status: response.status,
            detail: `${changed.join(', ')}: ${response.text.slice(0, 300)}`,
          });
        }
      }
    }
    options.onProgress?.(report);
  }
  return report;
}
