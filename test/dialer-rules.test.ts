import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Statement } from '../src/db/sql.js';
import { updateCampaign } from '../src/services/campaigns/campaigns.js';
import { resumeCampaign } from '../src/services/campaigns/dispatch.js';
import { pauseCampaign } from '../src/services/campaigns/transitions.js';
import { importContacts } from '../src/services/contacts/import.js';
import type { ServiceEnv } from '../src/services/context.js';
import { enrollContacts } from '../src/services/campaigns/store.js';
import { startTestApp, type TestApp } from './support/app.js';
import {
  dialerEnv,
  holdWrites,
  ManualClock,
  manualDialer,
  recordingDialer,
  RecordingTelephony,
  runningCampaign,
} from './support/dialer.js';

// Three rules the dialer keeps whatever the timing: one call at a time per number of a customer, across
// groups and campaigns; a new calling window re-plans the contacts waiting for the old one; and a
// campaign pauses for credits only when, at one moment, no call can be paid and none is in flight.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const ALL_DAY = {
  callingHours: { start: '00:00', end: '24:00' },
  activeDays: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
  regionalRules: false,
};

/** Another running campaign of the same user, on a group of its own imported from `rows`. */
async function secondCampaign(env: ServiceEnv, setup: Awaited<ReturnType<typeof runningCampaign>>, rows: Record<string, string>[]) {
  const imported = await importContacts(setup.ctx, { group_name: `Also ${randomUUID()}`, csv_data: rows });
  const campaign = await app.prisma.campaign.create({
    data: {
      userId: setup.userId,
      agentId: setup.agent.id,
      contactGroupId: imported.groupId,
      name: 'Second',
      status: 'running',
      startedAt: env.clock.now(),
      concurrentCalls: 10,
      timezone: 'UTC',
      ...ALL_DAY,
    },
  });
  await enrollContacts(app.sql, campaign.id, env.clock.now());
  return campaign.id;
}

describe('one person, one call', () => {
  it('leaves a number in flight from another campaign for later, then calls it', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const env = dialerEnv(app, clock);
    const dialer = recordingDialer(env, () => ({ outcome: 'no_answer', durationSeconds: 0 }));
    const { telephony } = dialer;
    telephony.auto = false;
    const shared = '+14155550142';
    const setup = await runningCampaign(app, env, { rows: [{ Phone: shared }, { Phone: '+14155550143' }], campaign: ALL_DAY });
    const other = await secondCampaign(env, setup, [{ Phone: shared }, { Phone: '+14155550144' }]);

    await dialer.run(setup.campaignId);
    await dialer.run(other);
    expect(telephony.placed.map((c) => c.to).sort()).toEqual(['+14155550142', '+14155550143', '+14155550144']);
    expect(telephony.overlaps).toBe(0);

    telephony.deliver();
    await dialer.dialer.settled();
    await dialer.run(other);
    expect(telephony.placed.filter((c) => c.to === shared)).toHaveLength(2);
    expect(telephony.overlaps).toBe(0);
  });

  it('holds across workers ticking several campaigns over the same numbers at once', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const env = dialerEnv(app, clock);
    // One telephony for every worker: it sees every call in flight, whoever placed it.
    const placedBy = new Map<string, ReturnType<typeof manualDialer>>();
    const telephony = new RecordingTelephony(
      clock,
      () => ({ outcome: 'human', durationSeconds: 10 }),
      () => (r) => placedBy.get(r.attemptId)!.dialer.report(r),
    );
    const workers = [0, 1].map(() => {
      const worker: ReturnType<typeof manualDialer> = manualDialer(env, {
        placeCall: async (call) => {
          placedBy.set(call.attemptId, worker);
          return telephony.placeCall(call);
        },
        stop: () => undefined,
      });
      return worker;
    });
    // An import takes its rows as it reads them: each gets a list of its own.
    const rows = () => Array.from({ length: 30 }, (_, i) => ({ Phone: `+1415${3_100_000 + i}` }));
    const setup = await runningCampaign(app, env, { rows: rows(), campaign: ALL_DAY });
    const campaigns = [setup.campaignId];
    for (let i = 0; i < 3; i += 1) campaigns.push(await secondCampaign(env, setup, rows()));

    // Each round is what a sweep does: every running campaign gets a tick from every worker. A number
    // in flight elsewhere is left for a later round.
    for (let round = 0; round < 20; round += 1) {
      await Promise.all(workers.flatMap((worker) => campaigns.map((id) => worker.run(id))));
      if ((await app.prisma.campaign.count({ where: { id: { in: campaigns }, status: 'running' } })) === 0) break;
    }
    expect(telephony.overlaps).toBe(0);
    // Every campaign still reached every number, one after the other.
    expect(telephony.placed).toHaveLength(120);
    const statuses = await app.prisma.campaign.findMany({ where: { id: { in: campaigns } }, select: { status: true } });
    expect(statuses.map((s) => s.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
  });

  it('is kept by the database too: a second call in flight to one number of a user is refused', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const setup = await runningCampaign(app, dialerEnv(app, clock), { rows: [{ Phone: '+14155550150' }] });
    const contact = await app.prisma.contact.findFirstOrThrow({ where: { groupId: setup.groupId } });
    const attempt = {
      userId: setup.userId,
      campaignId: setup.campaignId,
      contactId: contact.id,
      toNumber: '+14155550150',
      status: 'ringing' as const,
    };
    await app.prisma.callAttempt.create({ data: { ...attempt, attemptNumber: 1 } });
    await expect(app.prisma.callAttempt.create({ data: { ...attempt, attemptNumber: 2 } })).rejects.toThrow();
    await app.prisma.callAttempt.create({ data: { ...attempt, attemptNumber: 3, status: 'no_answer' } });
  });
});

describe('a new calling window', () => {
  it('re-plans the contacts waiting for the old one: widened hours call at once after resume', async () => {
    // Monday 12:00 UTC, outside 09:00-10:00: the contacts wait for Tuesday 09:00.
    const clock = new ManualClock(new Date('2026-11-02T12:00:00Z'));
    const env = dialerEnv(app, clock);
    const dialer = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 10 }));
    const { telephony } = dialer;
    const setup = await runningCampaign(app, env, {
      rows: [{ Phone: '+14155550160' }, { Phone: '+14155550161' }],
      campaign: { callingHours: { start: '09:00', end: '10:00' } },
    });
    await dialer.run(setup.campaignId);
    expect(telephony.placed).toHaveLength(0);
    const waiting = await app.prisma.campaignContact.findMany({ where: { campaignId: setup.campaignId } });
    expect(waiting.map((c) => c.nextAttemptAt?.toISOString())).toEqual(['2026-11-03T09:00:00.000Z', '2026-11-03T09:00:00.000Z']);

    await pauseCampaign(setup.ctx, setup.campaignId);
    await updateCampaign(setup.ctx, setup.campaignId, { calling_hours: { start: '00:00', end: '24:00' } });
    await resumeCampaign(setup.ctx, setup.campaignId);
    await dialer.run(setup.campaignId);
    expect(telephony.placed).toHaveLength(2);
  });

  it('re-plans on a change of days or zone, and leaves a retry waiting for its interval where it is', async () => {
    // Saturday 10:00 UTC, weekdays only: contacts wait for Monday.
    const clock = new ManualClock(new Date('2026-11-07T10:00:00Z'));
    const env = dialerEnv(app, clock);
    const dialer = recordingDialer(env, () => ({ outcome: 'no_answer', durationSeconds: 0 }));
    const { telephony } = dialer;
    const setup = await runningCampaign(app, env, {
      rows: [{ Phone: '+14155550170' }],
      campaign: { callingHours: { start: '09:00', end: '17:00' }, activeDays: ['mon', 'tue', 'wed', 'thu', 'fri'] },
    });
    await dialer.run(setup.campaignId);
    expect(telephony.placed).toHaveLength(0);
    await pauseCampaign(setup.ctx, setup.campaignId);
    await updateCampaign(setup.ctx, setup.campaignId, { active_days: ['sat', 'sun'] });
    await resumeCampaign(setup.ctx, setup.campaignId);
    await dialer.run(setup.campaignId);
    expect(telephony.placed).toHaveLength(1);

    // No answer: retried after 60 minutes. A new zone moves the window, not the interval.
    const [retry] = await app.prisma.campaignContact.findMany({ where: { campaignId: setup.campaignId } });
    expect(retry!.nextAttemptAt?.toISOString()).toBe('2026-11-07T11:00:00.000Z');
    await pauseCampaign(setup.ctx, setup.campaignId);
    await updateCampaign(setup.ctx, setup.campaignId, { timezone: 'Europe/Berlin' });
    await resumeCampaign(setup.ctx, setup.campaignId);
    await dialer.run(setup.campaignId);
    expect(telephony.placed).toHaveLength(1);
    clock.set('2026-11-07T11:00:00Z');
    await dialer.run(setup.campaignId);
    expect(telephony.placed).toHaveLength(2);
  });
});

describe('pausing for credits', () => {
  it('does not pause when calls ended between the tick’s read of the balance and its claim', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const env = dialerEnv(app, clock);
    const base = { ...env, settings: { ...env.settings, callHoldMinutes: 1 } };
    // Two workers on one campaign: the first holds every credit for its calls, whose results it has
    // heard but not written yet.
    let first: ReturnType<typeof manualDialer>;
    const calls = new RecordingTelephony(
      clock,
      () => ({ outcome: 'human', durationSeconds: 5 }),
      () => (r) => first.dialer.report(r),
    );
    first = manualDialer(base, calls);
    const write = holdWrites(first.dialer);
    // 60 cents a minute, one minute held per call: 4 calls' worth.
    const setup = await runningCampaign(app, base, {
      rows: Array.from({ length: 8 }, (_, i) => ({ Phone: `+1415${3_200_000 + i}` })),
      creditsCents: 240,
      campaign: ALL_DAY,
    });
    await first.dialer.tick(setup.campaignId);
    expect(calls.placed).toHaveLength(4);

    // The second reads the balance (all of it held), and the first's results land right after.
    let landed = false;
    const afterRead = async (text: string) => {
      if (!landed && /^\s*SELECT balance_cents/.test(text)) {
        landed = true;
        await new Promise((resolve) => setImmediate(resolve));
        write();
        await first.dialer.settled();
      }
    };
    // Named statements (a store's) and unnamed text alike.
    const sql = {
      ...base.sql,
      run: async <R>(statement: Statement<R>, values?: readonly unknown[]) => {
        const rows = await base.sql.run(statement, values);
        await afterRead(statement.text);
        return rows;
      },
      transaction: base.sql.transaction.bind(base.sql),
    };
    let second: ReturnType<typeof manualDialer>;
    const more = new RecordingTelephony(
      clock,
      () => ({ outcome: 'human', durationSeconds: 5 }),
      () => (r) => second.dialer.report(r),
    );
    second = manualDialer({ ...base, sql }, more);
    await second.run(setup.campaignId);

    expect(landed).toBe(true);
    const campaign = await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId } });
    expect(campaign.pausedReason).toBeNull();
    expect(more.placed.length).toBeGreaterThan(0);
  });
});
