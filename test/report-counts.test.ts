import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { dynamicStatement, statement } from '../src/db/sql.js';
import { uuidv7 } from '../src/services/ids.js';
import { foldReportTotals, getCampaignReport } from '../src/services/results/reports.js';
import type { CallResult } from '../src/services/voice/providers/telephony.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, ManualClock, recordingDialer, runningCampaign } from './support/dialer.js';
import { COUNTED, nonZero, TOTALLED } from './support/report-counts.js';

// The report's appointments, dial blocks, callbacks and variant figures are read from counts that
// triggers keep beside appointments, dial_blocks, call_attempts and campaign_contacts. Whatever writes
// those tables (the dialer, a correction, a cancellation, a removal), and however many writers at once,
// the counts must equal what counting the rows gives, before and after the sweep folds them; so must the
// report's figures.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const onPostgres = inject('testDatabase').kind === 'postgres';
const counted = statement<Record<string, unknown>>('test.reportCounted', nonZero(COUNTED));
const totalled = statement<Record<string, unknown>>('test.reportTotalled', nonZero(TOTALLED));

async function expectCountsMatch(campaignId: string | null) {
  const rows = await app.sql.run(counted, [campaignId]);
  expect(await app.sql.run(totalled, [campaignId])).toEqual(rows);
  return rows;
}

/** Results that retry, connect, and ask for callbacks. */
function variedResult(now: Date, to: string, attemptNumber: number): Omit<CallResult, 'attemptId'> {
  const pick = (Number(to.slice(-2)) + attemptNumber) % 5;
  if (pick === 0) return { outcome: 'human', durationSeconds: 40 + attemptNumber, sentiment: 'positive' };
  if (pick === 1) return { outcome: 'human', durationSeconds: 30, callbackAt: new Date(now.getTime() + 86_400_000) };
  if (pick === 2) return { outcome: 'voicemail', durationSeconds: 20 };
  if (pick === 3) return { outcome: 'busy', durationSeconds: 0 };
  return { outcome: 'no_answer', durationSeconds: 0 };
}

const addVariants = dynamicStatement(
  'test.addVariants',
  `WITH v AS (
     INSERT INTO campaign_variants (id, campaign_id, agent_id, name, weight, position)
     VALUES ($2::uuid, $1::uuid, $4::uuid, 'A', 50, 0), ($3::uuid, $1::uuid, $4::uuid, 'B', 50, 1) RETURNING id)
   UPDATE campaign_contacts SET variant_id = CASE WHEN right(contact_id::text, 1) < '8' THEN $2::uuid ELSE $3::uuid END
   WHERE campaign_id = $1::uuid`,
);

const book = dynamicStatement(
  'test.book',
  `INSERT INTO appointments (id, user_id, contact_id, campaign_id, status, scheduled_at, timezone, contact_snapshot, updated_at)
   SELECT gen_random_uuid(), $2::uuid, contact_id, campaign_id, 'scheduled', now(), 'UTC', '{}', now()
   FROM campaign_contacts WHERE campaign_id = $1::uuid ORDER BY contact_id LIMIT $3`,
);

const block = dynamicStatement(
  'test.block',
  `INSERT INTO dial_blocks (id, user_id, campaign_id, contact_id, reason, created_at)
   SELECT $4::uuid, $2::uuid, $1::uuid, contact_id, $3::"DialBlockReason", now() FROM campaign_contacts WHERE campaign_id = $1::uuid LIMIT 1`,
);

const askCallbacks = dynamicStatement(
  'test.askCallbacks',
  `UPDATE campaign_contacts SET callback_at = $3::timestamptz WHERE campaign_id = $1::uuid AND right(contact_id::text, 1) = $2`,
);

describe('report counts', () => {
  it('equal the rows, and the report shows them, after a mix of writes and folds', async () => {
    const clock = new ManualClock(new Date('2026-11-05T10:00:00Z'));
    const env = dialerEnv(app, clock);
    const dialer = recordingDialer(env, (call) => variedResult(clock.now(), call.to, call.attemptNumber));
    const setup = await runningCampaign(app, env, {
      rows: Array.from({ length: 30 }, (_, i) => ({ Phone: `+1415558${String(1000 + i)}` })),
      campaign: { concurrentCalls: 6, scheduleConfig: { max_attempts: 2, max_attempts_per_day: 2, retry_interval_minutes: 60 } },
    });
    const { campaignId, userId } = setup;
    const [a, b] = [uuidv7(), uuidv7()];
    await app.sql.run(addVariants, [campaignId, a, b, setup.agent.id]);
    await expectCountsMatch(campaignId);
    for (let round = 0; round < 3; round += 1) {
      await dialer.run(campaignId);
      await expectCountsMatch(campaignId);
      clock.advance(61 * 60_000);
    }

    // Appointments booked, cancelled, moved to another contact, one deleted, one unlinked from the campaign.
    await app.sql.run(book, [campaignId, userId, 9]);
    const booked = await app.prisma.appointment.findMany({ where: { campaignId }, orderBy: { id: 'asc' } });
    await app.prisma.appointment.updateMany({ where: { id: { in: [booked[0]!.id, booked[1]!.id] } }, data: { status: 'cancelled' } });
    await app.prisma.appointment.update({ where: { id: booked[2]!.id }, data: { contactId: booked[8]!.contactId } });
    await app.prisma.appointment.delete({ where: { id: booked[3]!.id } });
    await app.prisma.appointment.update({ where: { id: booked[4]!.id }, data: { campaignId: null } });
    await expectCountsMatch(campaignId);

    // Blocks recorded, one's reason corrected, one removed.
    const blocks = [uuidv7(), uuidv7(), uuidv7(), uuidv7()];
    for (const [i, id] of blocks.entries()) await app.sql.run(block, [campaignId, userId, i % 2 ? 'do_not_call' : 'regional_hours', id]);
    await app.prisma.dialBlock.update({ where: { id: blocks[0]! }, data: { reason: 'holiday' } });
    await app.prisma.dialBlock.delete({ where: { id: blocks[1]! } });
    await expectCountsMatch(campaignId);

    // Callbacks withdrawn and asked for outside the dialer, a cost corrected, an attempt removed.
    const where = { campaignId };
    const [asked] = await app.prisma.callAttempt.findMany({ where: { ...where, callbackAt: { not: null } }, take: 1 });
    expect(asked).toBeDefined();
    await app.prisma.callAttempt.update({ where: { id: asked!.id }, data: { callbackAt: null } });
    await app.prisma.campaignContact.updateMany({ where: { ...where, contactId: asked!.contactId }, data: { callbackAt: null } });
    await app.prisma.campaignContact.updateMany({ where: { ...where, attempts: 0 }, data: { callbackAt: clock.now() } });
    await app.prisma.callAttempt.updateMany({ where: { ...where, status: 'completed' }, data: { costCents: { increment: 3 } } });
    const [first] = await app.prisma.callAttempt.findMany({ where, orderBy: { createdAt: 'asc' }, take: 1 });
    await app.prisma.creditTransaction.deleteMany({ where: { callAttemptId: first!.id } });
    await app.prisma.callAttempt.delete({ where: { id: first!.id } });
    await expectCountsMatch(campaignId);

    await foldReportTotals(env);
    const rows = await expectCountsMatch(campaignId);
    // One row per campaign, variant and reason once folded.
    const [{ n }] = (await app.prisma.$queryRawUnsafe<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM campaign_report_counts WHERE campaign_id = $1::uuid',
      campaignId,
    )) as [{ n: number }];
    expect(n).toBeLessThanOrEqual(rows.length + 3);

    // The report shows what the rows give.
    const { metrics } = await getCampaignReport(setup.ctx, campaignId);
    expect(metrics.appointmentsBooked).toBe(await app.prisma.appointment.count({ where }));
    expect(metrics.callbacks).toEqual({
      requested: await app.prisma.callAttempt.count({ where: { ...where, callbackAt: { not: null } } }),
      pending: await app.prisma.campaignContact.count({ where: { ...where, callbackAt: { not: null } } }),
    });
    expect(metrics.callbacks.requested).toBeGreaterThan(0);
    const byReason = await app.prisma.dialBlock.groupBy({ by: ['reason'], where, _count: true });
    expect(metrics.blocked).toMatchObject({ total: 3, holiday: 1, doNotCall: 1, regionalHours: 1 });
    expect(byReason.reduce((sum, r) => sum + r._count, 0)).toBe(metrics.blocked.total);
    const split = metrics.variants.map((v) => [v.name, v.contacts, v.attempted, v.reached, v.appointments, v.calls, v.costCents]);
    const fromRows = await app.prisma.$queryRawUnsafe<unknown[][]>(
      `SELECT json_build_array(v.name, (SELECT count(*) FROM campaign_contacts cc WHERE cc.variant_id = v.id),
              (SELECT count(*) FROM campaign_contacts cc WHERE cc.variant_id = v.id AND attempts > 0),
              (SELECT count(*) FROM campaign_contacts cc WHERE cc.variant_id = v.id AND outcome = 'reached'),
              (SELECT count(*) FROM appointments ap JOIN campaign_contacts cc ON cc.campaign_id = ap.campaign_id AND cc.contact_id = ap.contact_id
               WHERE cc.variant_id = v.id),
              (SELECT count(*) FROM call_attempts ca JOIN campaign_contacts cc ON cc.campaign_id = ca.campaign_id AND cc.contact_id = ca.contact_id
               WHERE cc.variant_id = v.id),
              (SELECT coalesce(sum(cost_cents), 0) FROM call_attempts ca JOIN campaign_contacts cc ON cc.campaign_id = ca.campaign_id AND cc.contact_id = ca.contact_id
               WHERE cc.variant_id = v.id)) AS row
       FROM campaign_variants v WHERE v.campaign_id = $1::uuid ORDER BY v.position`,
      campaignId,
    );
    expect(split.map(([name, ...figures]) => [name, ...figures.map(Number)])).toEqual(
      (fromRows as unknown as { row: unknown[] }[]).map((r) => r.row),
    );
    expect(split.map((v) => v[1])).toEqual([expect.any(Number), expect.any(Number)]);
    expect((split[0]![1] as number) + (split[1]![1] as number)).toBe(30);
  });

  // Many writers at once on the same campaign (on the embedded database, one connection runs them in turn).
  it('stay exact with many writers and folds at once', async () => {
    const clock = new ManualClock(new Date('2026-11-06T10:00:00Z'));
    const env = dialerEnv(app, clock);
    const dialer = recordingDialer(env, (call) => variedResult(clock.now(), call.to, call.attemptNumber));
    const setup = await runningCampaign(app, env, {
      rows: Array.from({ length: 24 }, (_, i) => ({ Phone: `+1415559${String(1000 + i)}` })),
      campaign: { concurrentCalls: 6, scheduleConfig: { max_attempts: 3, max_attempts_per_day: 3, retry_interval_minutes: 60 } },
    });
    const { campaignId, userId } = setup;
    await app.sql.run(addVariants, [campaignId, uuidv7(), uuidv7(), setup.agent.id]);
    const writers = onPostgres ? 8 : 2;
    for (let round = 0; round < 3; round += 1) {
      await Promise.all([
        dialer.run(campaignId),
        foldReportTotals(env),
        ...Array.from({ length: writers }, async (_, w) => {
          for (let i = 0; i < 5; i += 1) {
            await app.sql.run(book, [campaignId, userId, 2]);
            await app.sql.run(block, [campaignId, userId, (w + i) % 2 ? 'frequency_cap' : 'regional_day', uuidv7()]);
            await app.prisma.appointment.deleteMany({
              where: { id: (await app.prisma.appointment.findFirst({ where: { campaignId }, orderBy: { id: 'desc' } }))?.id ?? '' },
            });
            await app.sql.run(askCallbacks, [campaignId, String((w + i) % 10), i % 2 ? null : clock.now()]);
            if (i === 2) await foldReportTotals(env);
          }
        }),
      ]);
      await expectCountsMatch(campaignId);
      clock.advance(61 * 60_000);
    }
    await foldReportTotals(env);
    const rows = await expectCountsMatch(campaignId);
    expect(rows.some((r) => (r.blocks as number) > 0 && r.reason === 'frequency_cap')).toBe(true);
    expect(rows.some((r) => (r.appointments as number) > 0)).toBe(true);
  });

  // The backfill of the report_counts migration, as if the triggers had just been made over rows they never
  // saw: each batch counts its campaigns' rows and takes away what the triggers added meanwhile, in one
  // snapshot. Writers on every campaign run the whole time (on PostgreSQL; in turn on the embedded one).
  it('of every campaign equal the rows after the backfill, with writers going on, and counting again adds nothing', async () => {
    await expectCountsMatch(null);
    const campaigns = await app.prisma.campaign.findMany({ select: { id: true, userId: true }, orderBy: { id: 'asc' } });
    expect(campaigns.length).toBeGreaterThan(1);
    await app.prisma.$executeRawUnsafe('DELETE FROM campaign_report_counts');
    let backfilling = true;
    const write = async () => {
      for (let i = 0; backfilling || i < 2; i += 1) {
        for (const { id, userId } of campaigns) {
          await app.sql.run(book, [id, userId, 1]);
          await app.sql.run(block, [id, userId, 'abandoned_recall', uuidv7()]);
          await app.sql.run(askCallbacks, [id, String(i % 10), i % 2 ? null : new Date()]);
        }
      }
    };
    await Promise.all([
      app.prisma.$executeRawUnsafe('CALL report_counts_backfill(1)').finally(() => (backfilling = false)),
      write(),
      write(),
    ]);
    const rows = await expectCountsMatch(null);
    expect(rows.filter((r) => r.reason === 'abandoned_recall').length).toBe(campaigns.length);
    await app.prisma.$executeRawUnsafe('CALL report_counts_backfill(2)');
    await expectCountsMatch(null);
  });
});
