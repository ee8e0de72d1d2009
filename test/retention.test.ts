import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamicStatement } from '../src/db/sql.js';
import { uuidv7 } from '../src/services/ids.js';
import { recordDelivery } from '../src/services/dialer/store/call-events.js';
import {
  dropExpiredMonths,
  dropExpiredRecordMonths,
  dropExpiredWebhookMonths,
  makeMonthsAhead,
  MONTHS_AHEAD,
  monthStart,
} from '../src/services/retention/partitions.js';
import { pseudonymiseExpiredCalls } from '../src/services/retention/pseudonymise.js';
import { purgeShortLived } from '../src/services/retention/purges.js';
import { monthsOf } from '../src/services/retention/store.js';
import { insertCallAttempts } from './support/billing.js';
import { dialerEnv, ManualClock } from './support/dialer.js';
import { startTestApp, type TestApp } from './support/app.js';

// call_attempts is partitioned by month on its UUIDv7 id (migrations call_attempts_*): the retention run
// makes the months ahead, a row lands in its month's partition, and the rule that a customer never has
// two calls in flight to one number, no longer a unique index, holds through live_calls.

/** A UUIDv7 of the instant `at`, as the service makes them (the random bits from a fresh one). */
const uuidv7At = (at: Date) => {
  const ms = at.getTime().toString(16).padStart(12, '0');
  return `${ms.slice(0, 8)}-${ms.slice(8, 12)}${uuidv7().slice(13)}`;
};

describe('call attempts by month', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  const partitionOf = async (id: string) =>
    (
      await app.prisma.$queryRawUnsafe<{ name: string }[]>(
        'SELECT tableoid::regclass::text AS name FROM call_attempts WHERE id = $1::uuid',
        id,
      )
    )[0]?.name;

  it('makes this month and the next three, once, and rows land in their month', async () => {
    const clock = new ManualClock(new Date('2031-01-15T12:00:00Z'));
    const env = dialerEnv(app, clock);
    const made = await makeMonthsAhead(env);
    expect(made.call_attempts).toEqual(['2031-01-01', '2031-02-01', '2031-03-01', '2031-04-01']);
    expect(MONTHS_AHEAD).toBe(3);
    expect(await makeMonthsAhead(env)).toEqual({
      call_attempts: [],
      webhook_deliveries: [],
      webhook_events: [],
      webhook_messages: [],
      credit_transactions: [],
      dial_blocks: [],
      campaign_changes: [],
    });
    expect(made.credit_transactions).toEqual(made.call_attempts);
    expect(made.dial_blocks).toEqual(made.call_attempts);
    expect(made.campaign_changes).toEqual(made.call_attempts);
    expect(await monthsOf(app.sql, 'call_attempts')).toEqual(expect.arrayContaining(made.call_attempts!));

    const { attemptIds } = await insertCallAttempts(app, uuidv7(), 1);
    expect(await partitionOf(attemptIds[0]!)).toBe(`call_attempts_p${monthStart(new Date()).slice(0, 7).replace('-', '_')}`);
    const moved = uuidv7At(new Date('2031-02-28T23:59:59.999Z'));
    await app.prisma.$executeRawUnsafe('UPDATE call_attempts SET id = $1::uuid WHERE id = $2::uuid', moved, attemptIds[0]);
    expect(await partitionOf(moved)).toBe('call_attempts_p2031_02');
    const beyond = uuidv7At(new Date('2031-05-01T00:00:00Z'));
    await app.prisma.$executeRawUnsafe('UPDATE call_attempts SET id = $1::uuid WHERE id = $2::uuid', beyond, moved);
    expect(await partitionOf(beyond)).toBe('call_attempts_default');
  });

  it('never has two calls in flight to one number of a customer, and frees the number when a call ends', async () => {
    const userId = uuidv7();
    const { campaignId, attemptIds } = await insertCallAttempts(app, userId, 2);
    const live = () => app.prisma.liveCall.findMany({ where: { userId }, orderBy: { toNumber: 'asc' } });
    expect((await live()).map((l) => l.attemptId)).toEqual(attemptIds);

    const [first] = await app.prisma.callAttempt.findMany({ where: { id: attemptIds[0] } });
    const again = { userId, campaignId, contactId: first!.contactId, attemptNumber: 9, toNumber: first!.toNumber };
    await expect(app.prisma.callAttempt.create({ data: again })).rejects.toThrow(/Unique constraint failed/);

    await app.prisma.callAttempt.update({ where: { id: attemptIds[0] }, data: { status: 'completed' } });
    expect((await live()).map((l) => l.attemptId)).toEqual([attemptIds[1]]);
    const second = await app.prisma.callAttempt.create({ data: again });
    expect((await live()).map((l) => l.attemptId)).toEqual([second.id, attemptIds[1]]);

    await app.prisma.callAttempt.delete({ where: { id: second.id } });
    await app.prisma.callAttempt.update({ where: { id: attemptIds[1] }, data: { status: 'ringing' } });
    expect((await live()).map((l) => l.attemptId)).toEqual([attemptIds[1]]);
  });

  it('drops the months past five years whole: charges and appointments stay, unlinked, and the report still counts the calls', async () => {
    const userId = uuidv7();
    const { campaignId, attemptIds } = await insertCallAttempts(app, userId, 2);
    await app.prisma.$queryRawUnsafe(`SELECT month_partition_add('call_attempts', 'call_attempts', '2020-06-01')`);
    // The first call was made in June 2020: its id is of that instant, so it is in that month's partition.
    const old = uuidv7At(new Date('2020-06-15T10:00:00Z'));
    await app.prisma.$executeRawUnsafe(
      `UPDATE call_attempts SET id = $1::uuid, status = 'completed', outcome = 'human', duration_seconds = 60, cost_cents = 10 WHERE id = $2::uuid`,
      old,
      attemptIds[0],
    );
    expect(await partitionOf(old)).toBe('call_attempts_p2020_06');
    const [attempt] = await app.prisma.callAttempt.findMany({ where: { id: old } });
    await app.prisma.$executeRawUnsafe(
      `INSERT INTO credit_transactions (id, user_id, kind, amount_cents, balance_after_cents, included_after_cents, description, campaign_id, call_attempt_id)
       VALUES ($1::uuid, $2::uuid, 'call_charge', -10, 0, 0, 'Call', $3::uuid, $4::uuid)`,
      uuidv7(),
      userId,
      campaignId,
      old,
    );
    await app.prisma.$executeRawUnsafe(
      `INSERT INTO appointments (id, user_id, contact_id, campaign_id, call_attempt_id, status, scheduled_at, timezone, contact_snapshot, updated_at)
       VALUES ($1::uuid, $2::uuid, $3::uuid, $4::uuid, $5::uuid, 'scheduled', now(), 'UTC', '{}', now())`,
      uuidv7(),
      userId,
      attempt!.contactId,
      campaignId,
      old,
    );
    const totals = () =>
      app.prisma.$queryRawUnsafe<{ status: string; calls: number; cost: number }[]>(
        `SELECT status::text, sum(calls)::int AS calls, sum(cost_cents)::int AS cost FROM campaign_call_totals
         WHERE campaign_id = $1::uuid GROUP BY status HAVING sum(calls) <> 0 ORDER BY status`,
        campaignId,
      );
    const before = await totals();
    expect(before).toEqual(
      [
        { status: 'queued', calls: 1, cost: 0 },
        { status: 'completed', calls: 1, cost: 10 },
      ].sort((a, b) => a.status.localeCompare(b.status)),
    );

    // In July 2026 the oldest month kept is July 2021.
    const env = dialerEnv(app, new ManualClock(new Date('2026-07-10T00:00:00Z')));
    expect(await dropExpiredMonths(env)).toEqual(['2020-06-01']);
    expect(await app.prisma.callAttempt.findMany({ where: { id: old } })).toEqual([]);
    expect(await app.prisma.$queryRawUnsafe(`SELECT to_regclass('call_attempts_p2020_06')::text AS gone`)).toEqual([{ gone: null }]);
    expect((await app.prisma.creditTransaction.findMany({ where: { userId } })).map((t) => [t.amountCents, t.callAttemptId])).toEqual([
      [-10n, null],
    ]);
    expect((await app.prisma.appointment.findMany({ where: { userId } })).map((a) => a.callAttemptId)).toEqual([null]);
    expect(await totals()).toEqual(before);
    expect(await dropExpiredMonths(env)).toEqual([]);
  });

  it("purges idempotency keys after 24 hours, every customer's", async () => {
    const userId = uuidv7();
    await app.prisma.user.create({ data: { id: userId } });
    const ago = (hours: number) => new Date(Date.now() - hours * 3_600_000);
    const keys = [uuidv7At(ago(25)), uuidv7At(ago(23))];
    for (const [i, id] of keys.entries()) {
      await app.prisma.idempotencyKey.create({
        data: { id, userId, key: `key-${i}`, fingerprint: Buffer.from('x'), scope: 'full', createdAt: ago(i ? 23 : 25) },
      });
    }
    expect(await purgeShortLived(dialerEnv(app, new ManualClock(new Date())), 1)).toEqual({ idempotencyKeys: 1 });
    expect((await app.prisma.idempotencyKey.findMany({ where: { userId } })).map((k) => k.id)).toEqual([keys[1]]);
  });

  it("pseudonymises a customer's ended calls past its setting, once, and no one else's", async () => {
    const userId = uuidv7();
    const token = await app.token(userId);
    expect((await app.gql('{ callDataRetention { days } }', {}, token)).data).toEqual({ callDataRetention: { days: null } });
    const refused = await app.gql('mutation { setCallDataRetention(input: { days: 0 }) { days } }', {}, token);
    expect(refused.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const set = await app.gql('mutation { setCallDataRetention(input: { days: 30 }) { days } }', {}, token);
    expect(set.data).toEqual({ setCallDataRetention: { days: 30 } });

    const { attemptIds } = await insertCallAttempts(app, userId, 3);
    const other = await insertCallAttempts(app, uuidv7(), 1);
    const placed = async (id: string, daysAgo: number, ended: boolean) =>
      app.prisma.$executeRawUnsafe(
        `UPDATE call_attempts SET created_at = now() - make_interval(days => $2), summary = 'Talked about the offer',
           transcript = 'Hello', recording_url = 'https://recordings.example.com/1', status = $3::"CallStatus" WHERE id = $1::uuid`,
        id,
        daysAgo,
        ended ? 'completed' : 'in_progress',
      );
    await placed(attemptIds[0]!, 40, true);
    await placed(attemptIds[1]!, 10, true);
    await placed(attemptIds[2]!, 40, false);
    await placed(other.attemptIds[0]!, 40, true);

    const env = dialerEnv(app, new ManualClock(new Date()));
    expect(await pseudonymiseExpiredCalls(env)).toBe(1);
    const calls = await app.prisma.callAttempt.findMany({
      where: { id: { in: [...attemptIds, other.attemptIds[0]!] } },
      select: { id: true, toNumber: true, toNumberHash: true, summary: true, transcript: true, recordingUrl: true },
    });
    const byId = new Map(calls.map((c) => [c.id, c]));
    expect(byId.get(attemptIds[0]!)).toEqual({
      id: attemptIds[0],
      toNumber: null,
      toNumberHash: expect.stringMatching(/^[0-9a-f]{64}$/),
      summary: null,
      transcript: null,
      recordingUrl: null,
    });
    for (const kept of [attemptIds[1]!, attemptIds[2]!, other.attemptIds[0]!]) {
      expect(byId.get(kept)).toMatchObject({ toNumberHash: null, summary: 'Talked about the offer', transcript: 'Hello' });
    }
    expect(await pseudonymiseExpiredCalls(env)).toBe(0);
  });
});

// The webhook logs are partitioned by month on their UUIDv7 ids too (migrations webhook_logs_*): the
// retention run drops their months whole, providers' deliveries after 30 days, customers' events and
// their deliveries after the log's setting, but never a month that still holds a pending delivery or
// events a kept delivery sends.
describe('webhook logs by month', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  const addMonths = async (table: string, months: string[]) => {
    for (const month of months)
      await app.prisma.$queryRawUnsafe(`SELECT month_partition_add($1::regclass, $1::text, $2::date)`, table, month);
  };
  const partitionsOf = async (table: string) =>
    (
      await app.prisma.$queryRawUnsafe<{ name: string }[]>(
        `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass ORDER BY 1`,
        table,
      )
    ).map((row) => row.name);

  it("records a provider's event once, across months and concurrent deliveries, and drops its months after 30 days", async () => {
    await addMonths('webhook_deliveries', ['2019-05-01', '2019-06-01']);
    const may = uuidv7At(new Date('2019-05-20T10:00:00Z'));
    const june = uuidv7At(new Date('2019-06-20T10:00:00Z'));
    await app.prisma.webhookDelivery.create({ data: { id: may, source: 'retell', eventKey: 'call_may:call_ended' } });
    await app.prisma.webhookDelivery.create({ data: { id: june, source: 'retell', eventKey: 'call_june:call_ended' } });

    // A repeat lands in another month's partition than the first delivery: still a repeat.
    expect(await recordDelivery(app.sql, 'retell', 'call_june:call_ended')).toBe(false);
    expect(await recordDelivery(app.sql, 'twilio', 'call_june:call_ended')).toBe(true);
    const claims = await Promise.all(
      Array.from({ length: 5 }, () => app.sql.transaction((tx) => recordDelivery(tx, 'retell', 'call_concurrent:call_ended'))),
    );
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await app.prisma.webhookDelivery.count({ where: { eventKey: 'call_concurrent:call_ended' } })).toBe(1);

    // On 15 July 2019 the deliveries of before 15 June go: May whole, June not yet.
    const env = dialerEnv(app, new ManualClock(new Date('2019-07-15T00:00:00Z')));
    const before = await partitionsOf('webhook_deliveries');
    expect(await dropExpiredWebhookMonths(env)).toEqual({ webhook_deliveries: ['2019-05-01'], webhook_messages: [], webhook_events: [] });
    expect(await partitionsOf('webhook_deliveries')).toEqual(before.filter((name) => name !== 'webhook_deliveries_p2019_05'));
    expect((await app.prisma.webhookDelivery.findMany({ where: { id: { in: [may, june] } } })).map((d) => d.id)).toEqual([june]);
  });

  it('drops months of events and deliveries past 90 days, but not one with a delivery pending nor events a kept delivery sends', async () => {
    const months = ['2020-03-01', '2020-04-01', '2020-05-01', '2020-06-01'];
    await addMonths('webhook_events', months);
    await addMonths('webhook_messages', months);
    const userId = uuidv7();
    await app.prisma.user.create({ data: { id: userId } });
    const endpoint = await app.prisma.webhookEndpoint.create({
      data: { userId, url: 'https://hooks.example.com/in', eventTypes: ['campaign.completed'], secret: 'whsec_retention' },
    });
    /** An event of `day` and its delivery the same day, in `state`. */
    const sent = async (day: string, state: 'pending' | 'succeeded' | 'failed') => {
      const event = await app.prisma.webhookEvent.create({
        data: { id: uuidv7At(new Date(`${day}T12:00:00Z`)), userId, type: 'campaign.completed', payload: {} },
      });
      const message = await app.prisma.webhookMessage.create({
        data: { id: uuidv7At(new Date(`${day}T12:00:01Z`)), eventId: event.id, endpointId: endpoint.id, state },
      });
      return { event: event.id, message: message.id };
    };
    await sent('2020-03-10', 'succeeded');
    const april = await sent('2020-04-10', 'pending');
    const may = await sent('2020-05-10', 'failed');
    const june = await sent('2020-06-10', 'succeeded');
    // May's delivery replayed in a later month: that month's delivery still sends May's event.
    const replay = await app.prisma.webhookMessage.create({
      data: { eventId: may.event, endpointId: endpoint.id, state: 'succeeded', replayOf: may.message },
    });
    const others = {
      events: await app.prisma.webhookEvent.count({ where: { userId: { not: userId } } }),
      messages: await app.prisma.webhookMessage.count({ where: { endpointId: { not: endpoint.id } } }),
    };

    // On 15 September 2020 the log of before 17 June goes (90 days): March, April and May, but not June.
    const env = dialerEnv(app, new ManualClock(new Date('2020-09-15T00:00:00Z')));
    expect(env.settings.webhookLogRetentionDays).toBe(90);
    // (The deliveries' months of the test before go too: this clock is later.)
    expect(await dropExpiredWebhookMonths(env)).toMatchObject({
      webhook_messages: ['2020-03-01', '2020-05-01'],
      webhook_events: ['2020-03-01'],
    });
    const kept = async () => ({
      events: (await app.prisma.webhookEvent.findMany({ where: { userId }, orderBy: { id: 'asc' } })).map((e) => e.id),
      messages: (await app.prisma.webhookMessage.findMany({ where: { endpointId: endpoint.id }, orderBy: { id: 'asc' } })).map((m) => m.id),
    });
    expect(await kept()).toEqual({ events: [april.event, may.event, june.event], messages: [april.message, june.message, replay.id] });
    expect(await partitionsOf('webhook_messages')).not.toContain('webhook_messages_p2020_03');
    expect(await partitionsOf('webhook_messages')).toContain('webhook_messages_p2020_04');
    expect(await partitionsOf('webhook_events')).toEqual(expect.arrayContaining(['webhook_events_p2020_04', 'webhook_events_p2020_05']));

    // April's delivery succeeds at last: its month, and then its event's, go at the next run.
    await app.prisma.webhookMessage.update({ where: { id: april.message }, data: { state: 'succeeded' } });
    expect(await dropExpiredWebhookMonths(env)).toMatchObject({
      webhook_messages: ['2020-04-01'],
      webhook_events: ['2020-04-01'],
    });
    expect(await kept()).toEqual({ events: [may.event, june.event], messages: [june.message, replay.id] });
    expect(await dropExpiredWebhookMonths(env)).toEqual({ webhook_deliveries: [], webhook_messages: [], webhook_events: [] });
    // Nothing else went.
    expect(await app.prisma.webhookEvent.count({ where: { userId: { not: userId } } })).toBe(others.events);
    expect(await app.prisma.webhookMessage.count({ where: { endpointId: { not: endpoint.id } } })).toBe(others.messages);
  });
});

// The ledger is partitioned by month on its UUIDv7 ids too (migrations credit_transactions_*): a payment
// is still credited once across its months, and the retention run drops its months past five years whole,
// the balances (kept on the accounts) unchanged.
describe('the ledger by month', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  const ledgerRow = (id: string, userId: string, externalId: string | null) =>
    app.prisma.$executeRawUnsafe(
      `INSERT INTO credit_transactions (id, user_id, kind, amount_cents, balance_after_cents, included_after_cents, description, external_id)
       VALUES ($1::uuid, $2::uuid, 'top_up', 2500, 2500, 0, 'Top-up', $3)`,
      id,
      userId,
      externalId,
    );
  const partitionOf = async (id: string) =>
    (
      await app.prisma.$queryRawUnsafe<{ name: string }[]>(
        'SELECT tableoid::regclass::text AS name FROM credit_transactions WHERE id = $1::uuid',
        id,
      )
    )[0]?.name;

  it("credits a payment once whatever month its row is in, and drops the ledger's months past five years", async () => {
    const userId = uuidv7();
    await app.prisma.user.create({ data: { id: userId } });
    await app.prisma.creditAccount.create({ data: { userId, balanceCents: 5000n } });
    await app.prisma.$queryRawUnsafe(`SELECT month_partition_add('credit_transactions', 'credit_transactions', '2020-06-01')`);
    const old = uuidv7At(new Date('2020-06-15T10:00:00Z'));
    await ledgerRow(old, userId, 'pi_june_2020');
    expect(await partitionOf(old)).toBe('credit_transactions_p2020_06');
    const recent = uuidv7();
    await ledgerRow(recent, userId, 'pi_recent');
    expect(await partitionOf(recent)).toBe(`credit_transactions_p${monthStart(new Date()).slice(0, 7).replace('-', '_')}`);

    // The same payment again, in another month's partition, or a row changed to name it: refused.
    await expect(ledgerRow(uuidv7(), userId, 'pi_june_2020')).rejects.toThrow(/credit_transactions_external_id_key|23505/);
    await expect(app.prisma.creditTransaction.update({ where: { id: recent }, data: { externalId: 'pi_june_2020' } })).rejects.toThrow(
      /Unique constraint failed/,
    );
    await ledgerRow(uuidv7(), userId, null);
    await ledgerRow(uuidv7(), userId, null);

    // Two transactions writing one payment at once, for two accounts (no account's lock between them):
    // the second waits for the first's lock on the payment, then sees its row and is refused.
    const other = uuidv7();
    await app.prisma.user.create({ data: { id: other } });
    const credit = (user: string) =>
      app.sql.transaction(async (tx) => {
        await tx.run(
          dynamicStatement(
            'test.ledger_row',
            `INSERT INTO credit_transactions (id, user_id, kind, amount_cents, balance_after_cents, included_after_cents, description, external_id)
             VALUES ($1::uuid, $2::uuid, 'top_up', 2500, 2500, 0, 'Top-up', 'pi_race')`,
          ),
          [uuidv7(), user],
        );
        await new Promise((resolve) => setTimeout(resolve, 200));
      });
    const raced = await Promise.allSettled([credit(userId), credit(other)]);
    expect(raced.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(String((raced.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason)).toMatch(/in the ledger already/);
    expect(await app.prisma.creditTransaction.count({ where: { externalId: 'pi_race' } })).toBe(1);
    await app.prisma.creditTransaction.deleteMany({ where: { externalId: 'pi_race' } });

    // In July 2026 the oldest month kept is July 2021.
    const env = dialerEnv(app, new ManualClock(new Date('2026-07-10T00:00:00Z')));
    expect(await dropExpiredRecordMonths(env)).toEqual({ credit_transactions: ['2020-06-01'], dial_blocks: [], campaign_changes: [] });
    expect(await app.prisma.$queryRawUnsafe(`SELECT to_regclass('credit_transactions_p2020_06')::text AS gone`)).toEqual([{ gone: null }]);
    const rows = await app.prisma.creditTransaction.findMany({ where: { userId } });
    expect(rows.map((t) => t.id)).not.toContain(old);
    expect(rows).toHaveLength(3);
    expect((await app.prisma.creditAccount.findUnique({ where: { userId } }))!.balanceCents).toBe(5000n);
    expect(await dropExpiredRecordMonths(env)).toEqual({ credit_transactions: [], dial_blocks: [], campaign_changes: [] });
    // Gone with its month, the payment's id no longer stops a row naming it.
    await ledgerRow(uuidv7(), userId, 'pi_june_2020');
  });
});

// Dial blocks are partitioned by month on their UUIDv7 ids (migrations dial_blocks_*): the retention run
// drops their months past five years whole, and a campaign's blocks of the months kept stay counted.
describe('dial blocks by month', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it("drops the dial blocks' months past five years whole", async () => {
    const userId = uuidv7();
    const { campaignId, attemptIds } = await insertCallAttempts(app, userId, 1);
    const [attempt] = await app.prisma.callAttempt.findMany({ where: { id: attemptIds[0] } });
    await app.prisma.$queryRawUnsafe(`SELECT month_partition_add('dial_blocks', 'dial_blocks', '2020-06-01')`);
    const block = (id: string, at: Date) =>
      app.prisma.dialBlock.create({
        data: { id, userId, campaignId, contactId: attempt!.contactId, reason: 'regional_hours', createdAt: at },
      });
    const old = await block(uuidv7At(new Date('2020-06-15T10:00:00Z')), new Date('2020-06-15T10:00:00Z'));
    const july = await block(uuidv7At(new Date('2021-07-01T00:00:00Z')), new Date('2021-07-01T00:00:00Z'));
    const recent = await block(uuidv7(), new Date());
    const partition = await app.prisma.$queryRawUnsafe<{ name: string }[]>(
      'SELECT tableoid::regclass::text AS name FROM dial_blocks WHERE id = $1::uuid',
      old.id,
    );
    expect(partition).toEqual([{ name: 'dial_blocks_p2020_06' }]);

    // In July 2026 the oldest month kept is July 2021 (its block, in the default partition here, stays).
    const env = dialerEnv(app, new ManualClock(new Date('2026-07-10T00:00:00Z')));
    expect(await dropExpiredRecordMonths(env)).toEqual({ credit_transactions: [], dial_blocks: ['2020-06-01'], campaign_changes: [] });
    expect(await app.prisma.$queryRawUnsafe(`SELECT to_regclass('dial_blocks_p2020_06')::text AS gone`)).toEqual([{ gone: null }]);
    const kept = await app.prisma.dialBlock.groupBy({ by: ['reason'], where: { campaignId }, _count: true });
    expect(kept).toEqual([{ reason: 'regional_hours', _count: 2 }]);
    expect((await app.prisma.dialBlock.findMany({ where: { campaignId }, orderBy: { createdAt: 'asc' } })).map((b) => b.id)).toEqual([
      july.id,
      recent.id,
    ]);
    expect(await dropExpiredRecordMonths(env)).toEqual({ credit_transactions: [], dial_blocks: [], campaign_changes: [] });
  });
});

// Campaign history is partitioned by month on its UUIDv7 ids (migrations campaign_changes_*): the retention
// run drops its months past five years whole; the entries kept stay in their order, and new ones follow.
describe('campaign history by month', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it("drops the history's months past five years whole, the entries kept in their order", async () => {
    const { campaignId } = await insertCallAttempts(app, uuidv7(), 1);
    await app.prisma.$queryRawUnsafe(`SELECT month_partition_add('campaign_changes', 'campaign_changes', '2020-06-01')`);
    const entry = (id: string) =>
      app.prisma.$executeRawUnsafe(
        `INSERT INTO campaign_changes (id, campaign_id, actor, action, changes) VALUES ($1::uuid, $2::uuid, 'system', 'edited', '{}')`,
        id,
        campaignId,
      );
    const old = uuidv7At(new Date('2020-06-15T10:00:00Z'));
    await entry(old);
    const partition = await app.prisma.$queryRawUnsafe<{ name: string }[]>(
      'SELECT tableoid::regclass::text AS name FROM campaign_changes WHERE id = $1::uuid',
      old,
    );
    expect(partition).toEqual([{ name: 'campaign_changes_p2020_06' }]);
    const history = async () =>
      (await app.prisma.campaignChange.findMany({ where: { campaignId }, orderBy: { seq: 'asc' } })).map((c) => c.id);
    const before = await history();
    expect(before).toContain(old);

    const env = dialerEnv(app, new ManualClock(new Date('2026-07-10T00:00:00Z')));
    expect(await dropExpiredRecordMonths(env)).toEqual({ credit_transactions: [], dial_blocks: [], campaign_changes: ['2020-06-01'] });
    expect(await app.prisma.$queryRawUnsafe(`SELECT to_regclass('campaign_changes_p2020_06')::text AS gone`)).toEqual([{ gone: null }]);
    expect(await history()).toEqual(before.filter((id) => id !== old));
    const next = uuidv7();
    await entry(next);
    expect(await history()).toEqual([...before.filter((id) => id !== old), next]);
    expect(await dropExpiredRecordMonths(env)).toEqual({ credit_transactions: [], dial_blocks: [], campaign_changes: [] });
  });
});
