import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { openDatabase, type Database } from '../src/db/database.js';
import { embeddedOptions } from '../src/db/embedded-settings.js';
import { copyTemplate, writeEmbeddedTemplate } from '../src/db/embedded-template.js';
import { seedAgentTemplates } from '../src/db/seed.js';
import { dynamicStatement } from '../src/db/sql.js';
import { redateCopiedDemo, REDATE_MARKER } from '../src/demo/redate.js';
import { DEMO_USER_ID } from '../src/demo/seed.js';
import { writeDemoTemplate } from '../src/demo/template.js';
import { prepareJobQueues } from '../src/jobs/process-jobs.js';
import { createLogger } from '../src/logger.js';

// `npm install` seeds the demo into a template; a first start copies it and moves its data to the present
// (src/demo/template.ts, src/demo/redate.ts). Here the first start comes 40 days after the seeding.

const DAY = 24 * 3600_000;
const MINUTE = 60_000;
const log = createLogger('silent');

/** Every timestamp of the public tables (partitions read through their parent), as [table.column, ms], in order. */
async function timestamps(db: Database): Promise<[string, number][]> {
  const columns = await db.sql.run<{ table: string; column: string }>(
    dynamicStatement(
      'test.timestampColumns',
      `SELECT c.relname AS table, a.attname AS column
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relname <> '_prisma_migrations'
          AND a.atttypid IN ('timestamptz'::regtype, 'timestamp'::regtype)
        ORDER BY 1, 2`,
    ),
  );
  const found: [string, number][] = [];
  for (const { table, column } of columns) {
    const rows = await db.sql.run<{ at: Date }>(
      dynamicStatement('test.timestamps', `SELECT "${column}" AS at FROM "${table}" WHERE "${column}" IS NOT NULL ORDER BY 1`),
    );
    for (const { at } of rows) found.push([`${table}.${column}`, at.getTime()]);
  }
  return found;
}

describe('the demo template, copied by a first start 40 days after its seeding', () => {
  let dir: string;
  let pgdata: string;
  let db: Database;
  let seededBefore: number;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'callflow-demo-template-'));
    const base = join(dir, 'template');
    const demo = join(dir, 'template-demo');
    await writeEmbeddedTemplate(base, async (pglite) => {
      const template = await openDatabase({ kind: 'pglite', instance: pglite });
      await prepareJobQueues(log, template);
      await seedAgentTemplates(template);
    });
    await writeDemoTemplate(loadConfig({}).settings, log, { path: demo, base });
    seededBefore = Date.now();
    pgdata = join(dir, 'data', 'pgdata');
    expect(await copyTemplate(pgdata, demo)).toBe(true);
    db = await openDatabase({ kind: 'pglite', instance: new PGlite(embeddedOptions(PGlite, { dataDir: pgdata })) });
  });

  afterAll(async () => {
    await db?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('moves every timestamp by the time since the seeding, once, and leaves the running totals as they were', async () => {
    const totals = dynamicStatement('test.totals', 'SELECT campaign_id, status, calls FROM campaign_call_totals ORDER BY 1, 2');
    const totalsBefore = await db.sql.run(totals);
    const before = await timestamps(db);
    expect(before.length).toBeGreaterThan(50);
    expect(existsSync(join(pgdata, REDATE_MARKER))).toBe(true);

    const now = new Date(Date.now() + 40 * DAY);
    expect(await redateCopiedDemo(db.sql, pgdata, now)).toBe(true);
    expect(existsSync(join(pgdata, REDATE_MARKER))).toBe(false);

    const after = await timestamps(db);
    expect(after.map(([column]) => column)).toEqual(before.map(([column]) => column));
    const shifts = new Set(after.map(([, at], i) => at - before[i]![1]));
    expect(shifts.size).toBe(1);
    const [shift] = shifts;
    expect(shift).toBeGreaterThanOrEqual(now.getTime() - seededBefore);
    expect(shift).toBeLessThan(40 * DAY + 10 * MINUTE);
    // Nothing the seeding wrote is later than the present, except what is dated ahead on purpose.
    const ahead = after.filter(([, at]) => at > now.getTime()).map(([column]) => column);
    expect([...new Set(ahead)].sort()).toEqual(['appointments.scheduled_at', 'regional_rule_exemptions.expires_at']);
    expect(await db.sql.run(totals)).toEqual(totalsBefore);

    // Yesterday's campaign was called yesterday, and its history of edits says when it started.
    const [called] = await db.sql.run<{ started_at: Date; changes: { started_at: { to: string } } }>(
      dynamicStatement(
        'test.called',
        `SELECT c.started_at, h.changes FROM campaigns c JOIN campaign_changes h ON h.campaign_id = c.id
          WHERE c.user_id = $1::uuid AND h.changes ? 'started_at'`,
      ),
      [DEMO_USER_ID],
    );
    expect(Math.abs(called!.started_at.getTime() - (now.getTime() - DAY))).toBeLessThan(10 * MINUTE);
    expect(new Date(called!.changes.started_at.to).getTime()).toBe(called!.started_at.getTime());

    // A later start finds no marker and moves nothing.
    expect(await redateCopiedDemo(db.sql, pgdata, new Date(now.getTime() + DAY))).toBe(false);
    expect(await timestamps(db)).toEqual(after);
  });
});
