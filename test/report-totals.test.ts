import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statement } from '../src/db/sql.js';
import type { CallResult } from '../src/services/voice/providers/telephony.js';
import { foldReportTotals } from '../src/services/results/reports.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, ManualClock, recordingDialer, runningCampaign } from './support/dialer.js';

// A report reads running totals that triggers keep beside call_attempts and campaign_contacts. Whatever
// writes those tables (the dialer, a correction, a removal), the totals must equal what counting the rows
// themselves gives, before and after the sweep folds them.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const CALL_COLUMNS = `calls, "durationSeconds", connected, "costCents", positive, neutral, negative, unknown`;

/** The call figures counted from the attempts themselves, one row per status that has calls. */
const countedCalls = statement(
  'test.countedCalls',
  `SELECT status::text, count(*)::int AS calls, coalesce(sum(duration_seconds), 0)::text AS "durationSeconds",
          count(*) FILTER (WHERE duration_seconds > 0)::int AS connected, sum(cost_cents)::text AS "costCents",
          count(*) FILTER (WHERE sentiment = 'positive')::int AS positive, count(*) FILTER (WHERE sentiment = 'neutral')::int AS neutral,
          count(*) FILTER (WHERE sentiment = 'negative')::int AS negative, count(*) FILTER (WHERE sentiment = 'unknown')::int AS unknown
   FROM call_attempts WHERE campaign_id = $1::uuid GROUP BY status ORDER BY status`,
);

/** The same figures from the totals, statuses whose figures are all 0 left out. */
const totalledCalls = statement(
  'test.totalledCalls',
  `SELECT * FROM (
     SELECT status::text, sum(calls)::int AS calls, sum(duration_seconds)::text AS "durationSeconds", sum(connected)::int AS connected,
            sum(cost_cents)::text AS "costCents", sum(positive)::int AS positive, sum(neutral)::int AS neutral,
            sum(negative)::int AS negative, sum(unknown)::int AS unknown
     FROM campaign_call_totals WHERE campaign_id = $1::uuid GROUP BY status) AS t
   WHERE (${CALL_COLUMNS}) <> (0, '0', 0, '0', 0, 0, 0, 0) ORDER BY status`,
);

const countedDials = statement(
  'test.countedDials',
  `SELECT count(*) FILTER (WHERE attempts > 0)::int AS attempted,
          count(*) FILTER (WHERE state = 'done' AND outcome = 'reached')::int AS reached, count(*) FILTER (WHERE state = 'done')::int AS done
   FROM campaign_contacts WHERE campaign_id = $1::uuid`,
);

const totalledDials = statement(
  'test.totalledDials',
  `SELECT coalesce(sum(attempted), 0)::int AS attempted, coalesce(sum(reached), 0)::int AS reached, coalesce(sum(done), 0)::int AS done
   FROM campaign_dial_totals WHERE campaign_id = $1::uuid`,
);

async function expectTotalsMatch(campaignId: string) {
  expect(await app.sql.run(totalledCalls, [campaignId])).toEqual(await app.sql.run(countedCalls, [campaignId]));
  expect(await app.sql.run(totalledDials, [campaignId])).toEqual(await app.sql.run(countedDials, [campaignId]));
}

const totalRows = statement<{ calls: number; dials: number }>(
  'test.totalRows',
  `SELECT (SELECT count(*)::int FROM campaign_call_totals WHERE campaign_id = $1::uuid) AS calls,
          (SELECT count(*)::int FROM campaign_dial_totals WHERE campaign_id = $1::uuid) AS dials`,
);

/** Every kind of result, picked by the number dialed and the attempt, so retries happen and some calls connect. */
function variedResult(to: string, attemptNumber: number): Omit<CallResult, 'attemptId'> {
  const pick = (Number(to.slice(-2)) + attemptNumber) % 6;
  if (pick === 0) return { outcome: 'human', durationSeconds: 40 + attemptNumber, sentiment: 'positive', summary: 'Booked.' };
  if (pick === 1) return { outcome: 'human', durationSeconds: 75, sentiment: 'negative' };
  if (pick === 2) return { outcome: 'voicemail', durationSeconds: 20 };
  if (pick === 3) return { outcome: 'busy', durationSeconds: 0 };
  if (pick === 4) return { outcome: 'failed', durationSeconds: 0 };
  return { outcome: 'no_answer', durationSeconds: 0 };
}

describe('report totals', () => {
  it('equal the attempts and dial states at every step of a campaign with retries, and after folds', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const env = dialerEnv(app, clock);
    const dialer = recordingDialer(env, (call) => variedResult(call.to, call.attemptNumber));
    const setup = await runningCampaign(app, env, {
      rows: Array.from({ length: 40 }, (_, i) => ({ Phone: `+1415555${String(1000 + i)}` })),
      campaign: { concurrentCalls: 7, scheduleConfig: { max_attempts: 3, max_attempts_per_day: 3, retry_interval_minutes: 60 } },
    });
    await expectTotalsMatch(setup.campaignId);
    for (let round = 0; round < 5; round += 1) {
      await dialer.run(setup.campaignId);
      await expectTotalsMatch(setup.campaignId);
      if (round === 2) await foldReportTotals(env);
      clock.advance(61 * 60_000);
    }
    expect((await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId } })).status).toBe('completed');
    expect(await app.prisma.callAttempt.count({ where: { campaignId: setup.campaignId, attemptNumber: 3 } })).toBeGreaterThan(0);

    await foldReportTotals(env);
    await expectTotalsMatch(setup.campaignId);
    const [rows] = await app.sql.run(totalRows, [setup.campaignId]);
    // One row per status a call of the campaign has had, and one of dial states.
    expect(rows!.calls).toBeLessThanOrEqual(9);
    expect(rows!.dials).toBe(1);
  });

  it('follow writes made outside the dialer: corrections, erasure, a removed attempt, a removed dial state', async () => {
    const clock = new ManualClock(new Date('2026-11-03T10:00:00Z'));
    const env = dialerEnv(app, clock);
    const dialer = recordingDialer(env, (call) => variedResult(call.to, call.attemptNumber));
    const setup = await runningCampaign(app, env, {
      rows: Array.from({ length: 12 }, (_, i) => ({ Phone: `+1415556${String(1000 + i)}` })),
      campaign: { scheduleConfig: { max_attempts: 1, max_attempts_per_day: 1, retry_interval_minutes: 60 } },
    });
    await dialer.run(setup.campaignId);
    const where = { campaignId: setup.campaignId };

    await app.prisma.callAttempt.updateMany({ where: { ...where, status: 'completed' }, data: { costCents: 7n, sentiment: 'neutral' } });
    await expectTotalsMatch(setup.campaignId);
    await app.prisma.callAttempt.updateMany({ where: { ...where, status: 'voicemail' }, data: { durationSeconds: null } });
    await expectTotalsMatch(setup.campaignId);
    // An update that touches none of the figures adds no row.
    const [before] = await app.sql.run(totalRows, [setup.campaignId]);
    await app.prisma.callAttempt.updateMany({ where, data: { toNumber: null, transcript: null } });
    expect(await app.sql.run(totalRows, [setup.campaignId])).toEqual([before]);

    const [first] = await app.prisma.callAttempt.findMany({ where, orderBy: { createdAt: 'asc' }, take: 1 });
    await app.prisma.creditTransaction.deleteMany({ where: { callAttemptId: first!.id } });
    await app.prisma.callAttempt.delete({ where: { id: first!.id } });
    await app.prisma.campaignContact.deleteMany({ where: { ...where, contactId: first!.contactId } });
    await expectTotalsMatch(setup.campaignId);
    await app.prisma.campaignContact.updateMany({ where, data: { state: 'pending', outcome: null } });
    await expectTotalsMatch(setup.campaignId);
  });

  it('lose and double nothing when folds run at once with writes going on', async () => {
    const clock = new ManualClock(new Date('2026-11-04T10:00:00Z'));
    const env = dialerEnv(app, clock);
    const dialer = recordingDialer(env, (call) => variedResult(call.to, call.attemptNumber));
    const setup = await runningCampaign(app, env, {
      rows: Array.from({ length: 30 }, (_, i) => ({ Phone: `+1415557${String(1000 + i)}` })),
      campaign: { concurrentCalls: 5, scheduleConfig: { max_attempts: 3, max_attempts_per_day: 3, retry_interval_minutes: 60 } },
    });
    for (let round = 0; round < 3; round += 1) {
      await Promise.all([
        dialer.run(setup.campaignId),
        foldReportTotals(env),
        foldReportTotals(env),
        app.prisma.callAttempt.updateMany({
          where: { campaignId: setup.campaignId, status: 'completed' },
          data: { costCents: { increment: 1 } },
        }),
        foldReportTotals(env),
      ]);
      await expectTotalsMatch(setup.campaignId);
      clock.advance(61 * 60_000);
    }
    await foldReportTotals(env);
    await expectTotalsMatch(setup.campaignId);
  });
});
