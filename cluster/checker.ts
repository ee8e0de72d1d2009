import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import type { FaultRecord } from './faults.js';
import type { Watcher } from './subscriptions.js';
import type { Answer } from './workload.js';

// The checker, run once the cluster is quiet: it reads the database and what the clients saw, and knows
// nothing of how the service keeps its rules. Each check names what it found that breaks the rule.

export interface Check {
  name: string;
  /** What broke the rule; empty when it held. */
  violations: string[];
  /** What was looked at, for the report. */
  looked: string;
}

const IN_FLIGHT = `('queued', 'ringing', 'in_progress')`;

async function rows<T extends pg.QueryResultRow>(db: pg.Pool, text: string, values: unknown[] = []): Promise<T[]> {
  return (await db.query<T>(text, values)).rows;
}

async function one<T extends pg.QueryResultRow>(db: pg.Pool, text: string, values: unknown[] = []): Promise<T> {
  const [row] = await rows<T>(db, text, values);
  if (!row) throw new Error(`no row from ${text}`);
  return row;
}

/** A call as the provider's log has it (the simulator's SIM_CALL_LOG of each worker). */
export interface ProviderCall {
  attemptId: string;
  worker: string;
  placedAt: Date;
  /** Null: no end was logged. */
  endedAt: Date | null;
}

/** Reads each worker's call log (`calls-<worker>.jsonl` in the run's folder). */
export function readCallLogs(logDir: string, workers: string[]): ProviderCall[] {
  const calls = new Map<string, ProviderCall>();
  for (const worker of workers) {
    const file = join(logDir, `calls-${worker}.jsonl`);
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line) continue;
      const entry = JSON.parse(line) as { attemptId: string; placedAt?: string; endedAt?: string };
      if (entry.placedAt)
        calls.set(entry.attemptId, { attemptId: entry.attemptId, worker, placedAt: new Date(entry.placedAt), endedAt: null });
      else if (entry.endedAt) {
        const call = calls.get(entry.attemptId);
        if (call) call.endedAt = new Date(entry.endedAt);
      }
    }
  }
  return [...calls.values()];
}

/**
 * When a call ended: as logged, or, since a simulated call dies with its worker, at the kill of its
 * worker that came before the worker was started again (the signal may reach it a moment after the call
 * began, and after the fault's start was noted); null when neither.
 */
function callEnd(call: ProviderCall, faults: FaultRecord[]): Date | null {
  if (call.endedAt) return call.endedAt;
  const kill = faults.find((f) => f.kind === 'kill-worker' && f.target === call.worker && f.endedAt >= call.placedAt.getTime());
  return kill ? new Date(Math.max(kill.startedAt, call.placedAt.getTime())) : null;
}

/** The most calls under way at one moment across the cluster, by the provider's log. */
export function peakUnderWay(calls: ProviderCall[], faults: FaultRecord[]): number {
  const edges = calls.flatMap((c) => {
    const end = callEnd(c, faults);
    return [
      [c.placedAt.getTime(), 1],
      [end ? end.getTime() : Infinity, -1],
    ] as [number, number][];
  });
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let peak = 0;
  for (const [, delta] of edges) peak = Math.max(peak, (now += delta));
  return peak;
}

/** How many calls were under way at the moment `at`, by the provider's log: what a fault there could hit. */
export function underWayAt(calls: ProviderCall[], faults: FaultRecord[], at: number): number {
  return calls.filter((c) => {
    const end = callEnd(c, faults);
    return c.placedAt.getTime() <= at && (end === null || end.getTime() > at);
  }).length;
}

/**
 * The provider's calls as SQL: a CTE `dialed` (attempt id, user, campaign, number, the range the call was
 * under way) with its parameters. A simulated call dies with its worker: a call with no logged end
 * ended when its worker was killed (the first kill of it after the call began), else it never ended.
 */
function dialedCalls(calls: ProviderCall[], faults: FaultRecord[]): { cte: string; values: unknown[]; unended: ProviderCall[] } {
  const endOf = (call: ProviderCall) => callEnd(call, faults);
  return {
    cte: `dialed AS (
      SELECT a.id, a.user_id, a.campaign_id, a.to_number, tstzrange(c.placed, coalesce(c.ended, 'infinity'), '[)') AS span
        FROM unnest($1::uuid[], $2::timestamptz[], $3::timestamptz[]) AS c(attempt_id, placed, ended)
        JOIN call_attempts a ON a.id = c.attempt_id)`,
    values: [calls.map((c) => c.attemptId), calls.map((c) => c.placedAt), calls.map(endOf)],
    unended: calls.filter((c) => endOf(c) === null),
  };
}

const at = (d: Date | null) => (d ? d.toISOString().slice(11, 23) : 'null');

/** Two calls to one number of one customer under way at once, in the provider's log: dialed twice at once. */
async function noNumberTwiceAtOnce(db: pg.Pool, dialed: { cte: string; values: unknown[] }, placed: number): Promise<Check> {
  const found = await rows<{ a: string; b: string; to_number: string; a_span: string; b_span: string }>(
    db,
    `WITH ${dialed.cte}
     SELECT a.id AS a, b.id AS b, a.to_number, a.span::text AS a_span, b.span::text AS b_span
       FROM dialed a JOIN dialed b ON b.user_id = a.user_id AND b.to_number = a.to_number AND b.id > a.id
      WHERE a.span && b.span
      LIMIT 20`,
    dialed.values,
  );
  return {
    name: 'no number dialed twice at once',
    violations: found.map((f) => `calls ${f.a} ${f.a_span} and ${f.b} ${f.b_span} to ${f.to_number} overlap`),
    looked: `${placed} calls in the provider's log`,
  };
}

/**
 * Every call the provider placed has its attempt, every attempt is final, every contact of every
 * campaign finished, and attempts are numbered 1..n with no gap.
 */
async function noAttemptLost(db: pg.Pool, dialed: ReturnType<typeof dialedCalls>, calls: ProviderCall[]): Promise<Check> {
  const violations: string[] = [];
  const recorded = await one<{ n: string }>(db, `WITH ${dialed.cte} SELECT count(*) AS n FROM dialed`, dialed.values);
  if (Number(recorded.n) !== calls.length)
    violations.push(`${calls.length - Number(recorded.n)} calls in the provider's log have no attempt`);
  for (const call of dialed.unended.slice(0, 20))
    violations.push(`call ${call.attemptId} of ${call.worker} never ended (no end logged, its worker not killed)`);
  for (const r of await rows<{ id: string; status: string }>(
    db,
    `SELECT id, status FROM call_attempts WHERE status IN ${IN_FLIGHT} LIMIT 20`,
  ))
    violations.push(`attempt ${r.id} still ${r.status}`);
  for (const r of await rows<{ id: string; status: string }>(db, `SELECT id, status FROM campaigns WHERE status <> 'completed' LIMIT 20`))
    violations.push(`campaign ${r.id} ended ${r.status}`);
  for (const r of await rows<{ campaign_id: string; contact_id: string; state: string }>(
    db,
    `SELECT campaign_id, contact_id, state FROM campaign_contacts WHERE state <> 'done' OR outcome IS NULL LIMIT 20`,
  ))
    violations.push(`contact ${r.contact_id} of campaign ${r.campaign_id} left ${r.state}`);
  // The contact's count of attempts against the attempts written, and their numbers 1..n.
  for (const r of await rows<{ campaign_id: string; contact_id: string; counted: number; written: string; top: number | null }>(
    db,
    `SELECT cc.campaign_id, cc.contact_id, cc.attempts AS counted, count(a.id) AS written, max(a.attempt_number) AS top
       FROM campaign_contacts cc LEFT JOIN call_attempts a ON a.campaign_id = cc.campaign_id AND a.contact_id = cc.contact_id
      GROUP BY cc.campaign_id, cc.contact_id, cc.attempts
     HAVING cc.attempts <> count(a.id) OR coalesce(max(a.attempt_number), 0) <> count(a.id)
      LIMIT 20`,
  ))
    violations.push(
      `contact ${r.contact_id} of campaign ${r.campaign_id}: counted ${r.counted} attempts, ${r.written} written, numbered up to ${r.top}`,
    );
  for (const r of await rows<{
    id: string;
    status: string;
    reason: string | null;
    created_at: Date;
    started_at: Date | null;
    ended_at: Date;
  }>(
    db,
    `SELECT id, status, disconnect_reason AS reason, created_at, started_at, ended_at FROM call_attempts
      WHERE ended_at < coalesce(started_at, created_at) LIMIT 20`,
  ))
    violations.push(
      `attempt ${r.id} (${r.status}/${r.reason}) ended at ${at(r.ended_at)}, before it began (claimed ${at(r.created_at)}, placed ${at(r.started_at)})`,
    );
  const { contacts, attempts } = await one<{ contacts: string; attempts: string }>(
    db,
    'SELECT (SELECT count(*) FROM campaign_contacts) AS contacts, (SELECT count(*) FROM call_attempts) AS attempts',
  );
  return { name: 'no call attempt lost', violations, looked: `${contacts} campaign contacts, ${attempts} attempts` };
}

/** The most calls of a campaign under way at one moment in the provider's log, against its limit. */
async function concurrencyWithinLimit(db: pg.Pool, dialed: { cte: string; values: unknown[] }): Promise<Check> {
  const found = await rows<{ campaign_id: string; peak: number; peak_at: Date; limit: number }>(
    db,
    `WITH ${dialed.cte},
     edges AS (
       SELECT campaign_id, lower(span) AS at, 1 AS delta FROM dialed
       UNION ALL
       SELECT campaign_id, upper(span), -1 FROM dialed
     ), running AS (
       SELECT campaign_id, at, sum(delta) OVER (PARTITION BY campaign_id ORDER BY at, delta ROWS UNBOUNDED PRECEDING) AS in_flight FROM edges
     )
     SELECT DISTINCT ON (r.campaign_id) r.campaign_id, r.in_flight::int AS peak, r.at AS peak_at, c.concurrent_calls AS limit
       FROM running r JOIN campaigns c ON c.id = r.campaign_id
      ORDER BY r.campaign_id, r.in_flight DESC, r.at`,
    dialed.values,
  );
  const over = found.filter((f) => f.peak > f.limit);
  const peaks = found.map((f) => f.peak);
  const violations: string[] = [];
  for (const f of over.slice(0, 10)) {
    // The calls under way at the peak, to tell a fault's trace from a rule broken.
    const calls = await rows<{ id: string; status: string; reason: string | null; span: string }>(
      db,
      `WITH ${dialed.cte}
       SELECT d.id, a.status, a.disconnect_reason AS reason, d.span::text AS span FROM dialed d JOIN call_attempts a ON a.id = d.id
        WHERE d.campaign_id = $4 AND d.span @> $5::timestamptz ORDER BY lower(d.span)`,
      [...dialed.values, f.campaign_id, f.peak_at],
    );
    violations.push(
      `campaign ${f.campaign_id}: ${f.peak} calls at once at ${at(f.peak_at)}, limit ${f.limit}: ` +
        calls.map((c) => `${c.id.slice(-6)} ${c.status}${c.reason ? `/${c.reason}` : ''} ${c.span}`).join('; '),
    );
  }
  return {
    name: "concurrency never above a campaign's limit",
    violations,
    looked: `${found.length} campaigns, peaks ${Math.min(...peaks)}..${Math.max(...peaks)}`,
  };
}

/** Each account equals its ledger, no hold is left, every charged call is charged once and as its cost says. */
async function ledgerMatches(db: pg.Pool): Promise<Check> {
  const violations: string[] = [];
  for (const r of await rows<{ user_id: string; ledger: string; account: string }>(
    db,
    `SELECT a.user_id, coalesce(sum(t.amount_cents), 0)::text AS ledger, (a.balance_cents + a.included_remaining_cents)::text AS account
       FROM credit_accounts a LEFT JOIN credit_transactions t ON t.user_id = a.user_id
      GROUP BY a.user_id, a.balance_cents, a.included_remaining_cents
     HAVING coalesce(sum(t.amount_cents), 0) <> a.balance_cents + a.included_remaining_cents`,
  ))
    violations.push(`user ${r.user_id}: ledger ${r.ledger}, account ${r.account}`);
  for (const r of await rows<{ user_id: string; held: string }>(
    db,
    'SELECT user_id, held_cents::text AS held FROM credit_accounts WHERE held_cents <> 0',
  ))
    violations.push(`user ${r.user_id} still holds ${r.held} cents`);
  for (const r of await rows<{ call_attempt_id: string }>(db, `SELECT call_attempt_id FROM credit_holds WHERE status = 'held' LIMIT 20`))
    violations.push(`attempt ${r.call_attempt_id} has a hold still open`);
  for (const r of await rows<{ id: string; charges: string; charged: string; cost: string }>(
    db,
    `SELECT a.id, count(t.id) AS charges, coalesce(-sum(t.amount_cents), 0)::text AS charged, a.cost_cents::text AS cost
       FROM call_attempts a LEFT JOIN credit_transactions t ON t.call_attempt_id = a.id AND t.kind = 'call_charge'
      GROUP BY a.id, a.cost_cents
     HAVING count(t.id) > 1 OR coalesce(-sum(t.amount_cents), 0) <> a.cost_cents
      LIMIT 20`,
  ))
    violations.push(`attempt ${r.id}: ${r.charges} charges of ${r.charged} cents in all, cost ${r.cost}`);
  const { charges, users } = await one<{ charges: string; users: string }>(
    db,
    `SELECT (SELECT count(*) FROM credit_transactions WHERE kind = 'call_charge') AS charges, (SELECT count(*) FROM credit_accounts) AS users`,
  );
  return { name: 'ledger equals balances, every finished call charged once', violations, looked: `${users} accounts, ${charges} charges` };
}

/** Each subscription's last event is its campaign's final state, or it reported an error. */
async function subscriptionsCaughtUp(db: pg.Pool, watchers: Watcher[]): Promise<Check> {
  const violations: string[] = [];
  for (const w of watchers) {
    const [campaign] = await rows<{ status: string; done: string; total: string }>(
      db,
      `SELECT c.status, count(*) FILTER (WHERE cc.state = 'done') AS done, count(cc.id) AS total
         FROM campaigns c LEFT JOIN campaign_contacts cc ON cc.campaign_id = c.id WHERE c.id = $1 GROUP BY c.status`,
      [w.campaignId],
    );
    const final = campaign ? { status: campaign.status, done: Number(campaign.done), total: Number(campaign.total) } : undefined;
    const caughtUp = w.last && final && w.last.status === final.status && w.last.done === final.done && w.last.total === final.total;
    if (!caughtUp && w.errors.length === 0)
      violations.push(
        `subscription to ${w.campaignId} (cut ${w.cuts} times): last saw ${JSON.stringify(w.last)}, final ${JSON.stringify(final)}`,
      );
  }
  const cut = watchers.filter((w) => w.cuts > 0).length;
  const errored = watchers.filter((w) => w.errors.length > 0).length;
  return {
    name: 'every subscription caught up or got an error',
    violations,
    looked: `${watchers.length} subscriptions, ${cut} cut and reconnected, ${errored} with an error`,
  };
}

/** A 500 from an instance counts unless that instance was being killed when the request was sent. */
function no500(answers: Answer[], faults: FaultRecord[]): Check {
  const killed = (server: string | null, at: number) =>
    faults.some((f) => f.kind === 'kill-api' && f.target === server && at >= f.startedAt - 1000 && at <= (f.recoveredAt ?? f.endedAt));
  const bad = answers.filter((a) => a.status === 500 && a.server !== null && !killed(a.server, a.at));
  const byStatus = new Map<number, number>();
  for (const a of answers) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
  return {
    name: 'no request answered 500 (but while its instance was being killed)',
    violations: bad.slice(0, 20).map((a) => `${a.what} answered 500 by ${a.server} at ${new Date(a.at).toISOString()}`),
    looked: `${answers.length} requests: ${[...byStatus]
      .sort((x, y) => x[0] - y[0])
      .map(([s, n]) => `${s || 'no answer'} x${n}`)
      .join(', ')}`,
  };
}

export async function runChecks(
  db: pg.Pool,
  calls: ProviderCall[],
  watchers: Watcher[],
  answers: Answer[],
  faults: FaultRecord[],
): Promise<Check[]> {
  const dialed = dialedCalls(calls, faults);
  return [
    await noNumberTwiceAtOnce(db, dialed, calls.length),
    await noAttemptLost(db, dialed, calls),
    await concurrencyWithinLimit(db, dialed),
    await ledgerMatches(db),
    await subscriptionsCaughtUp(db, watchers),
    no500(answers, faults),
  ];
}
