import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql, Statement } from '../src/db/sql.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, ManualClock, recordingDialer, runningCampaign } from './support/dialer.js';
import { testSql } from './support/sql.js';

// A statement prepared on a connection may run a generic plan from its sixth execution on; for the
// claim that plan read every contact of the campaign to find the tick's few. Seen here from inside the
// claim's own transaction, on its connection, after each claim statement.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

describe("the dialer's claim", () => {
  it('never runs from a generic plan, however often a connection has claimed', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const base = dialerEnv(app, clock);
    const seen: { backend: number; generic: number }[] = [];
    const sql: Sql = {
      run: (statement, values) => base.sql.run(statement, values),
      transaction: (work, options) =>
        base.sql.transaction(
          (tx) =>
            work({
              copyInto: (table, columns) => tx.copyInto(table, columns),
              run: async <R>(statement: Statement<R>, values?: readonly unknown[]) => {
                const rows = await tx.run(statement, values);
                if (statement.name === 'dialer.claim') {
                  // The connection's statements of the claim's text, prepared under any name, and the generic plans they ran.
                  const [plans] = await testSql(tx).query<{ backend: number; generic: number }>(
                    `SELECT pg_backend_pid() AS backend, coalesce(sum(generic_plans), 0)::int AS generic
                     FROM pg_prepared_statements WHERE statement = $1`,
                    [statement.text],
                  );
                  seen.push(plans!);
                }
                return rows;
              },
            }),
          options,
        ),
    };
    const env = { ...base, sql };
    const dialer = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 30 }));
    const rows = Array.from({ length: 20 }, (_, i) => ({ Phone: `+1415${3_000_000 + i}` }));
    const setup = await runningCampaign(app, env, { rows, campaign: { concurrentCalls: 1 } });

    await dialer.run(setup.campaignId);
    // One call at a time: a tick's claim for each contact.
    expect(dialer.telephony.placed).toHaveLength(20);
    expect(seen).toHaveLength(20);
    // Some connection claimed more than the five times after which a prepared statement may go generic...
    const claims = new Map<number, number>();
    for (const s of seen) claims.set(s.backend, (claims.get(s.backend) ?? 0) + 1);
    expect(Math.max(...claims.values())).toBeGreaterThan(5);
    // ...and none ran the claim from a generic plan.
    expect(seen.map((s) => s.generic)).toEqual(seen.map(() => 0));
  });
});
