import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RULES_VERSION } from '../src/services/calling-rules/regional-hours.js';
import { CALL_RECORD_COLUMNS } from '../src/services/results/records.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, ManualClock, recordingDialer, runningCampaign } from './support/dialer.js';

// Call records kept five years (TSR, 16 CFR 310.5): every attempt carries its numbers, times, duration,
// disposition, caller ID, the consents it relied on and the calling rules' version, recorded when it was
// placed; erasing the person keeps the record with the number pseudonymised (HMAC-SHA-256 under a key of
// signing_keys); and the records export as CSV through a signed link.

const START = new Date('2026-11-05T15:00:00Z');
const NUMBERS = ['+13125550101', '+13125550102', '+13125550103'];
const EXPORT = `mutation ($input: CallRecordsExportInput!) { exportCallRecords(input: $input) { path expiresAt } }`;

let app: TestApp;
let clock: ManualClock;
let setup: Awaited<ReturnType<typeof runningCampaign>>;

beforeAll(async () => {
  clock = new ManualClock(START);
  app = await startTestApp({ clock });
  const env = dialerEnv(app, clock);
  const dialer = recordingDialer(env, (call) =>
    call.to === NUMBERS[0] ? { outcome: 'human', durationSeconds: 42, summary: 'Talked' } : { outcome: 'no_answer', durationSeconds: 0 },
  );
  setup = await runningCampaign(app, env, {
    rows: NUMBERS.map((Phone, i) => ({ Phone, 'First Name': `P${i}`, 'Consent to call': '2026-10-01' })),
    campaign: { requiredConsent: ['calls'], scheduleConfig: { max_attempts: 1, max_attempts_per_day: 1, retry_interval_minutes: 60 } },
  });
  await dialer.run(setup.campaignId);
}, 60_000);
afterAll(() => app.close());

const attemptTo = (number: string) =>
  app.prisma.callAttempt.findFirstOrThrow({ where: { campaignId: setup.campaignId, toNumber: number } });

async function exportCsv(token: string, input: Record<string, unknown>) {
  const link = await app.gql(EXPORT, { input }, token);
  expect(link.errors).toBeUndefined();
  const res = await app.request('GET', link.data.exportCallRecords.path);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-disposition')).toBe('attachment; filename="call-records.csv"');
  const [header, ...rows] = res.text.trimEnd().split('\r\n');
  return { header: header!.split(','), rows: rows.map((r) => r.split(',')) };
}

describe('a call record', () => {
  it('carries the numbers, times, duration, disposition, caller ID, the consents relied on and the rules version', async () => {
    const attempt = await attemptTo(NUMBERS[0]!);
    const consents = await app.prisma.contactConsent.findMany({ where: { contactId: attempt.contactId, kind: 'calls' } });
    expect(consents).toHaveLength(1);
    expect(attempt).toMatchObject({
      toNumber: NUMBERS[0],
      fromNumber: setup.agent.phoneNumbers[0]!.number,
      createdAt: START,
      durationSeconds: 42,
      status: 'completed',
      outcome: 'human',
      consentsRelied: [{ id: consents[0]!.id, kind: 'calls' }],
      rulesVersion: RULES_VERSION,
    });
    expect(attempt.endedAt).toEqual(expect.any(Date));
    expect(RULES_VERSION).toEqual(expect.any(String));
  });

  it('records that a campaign requiring no consent relied on none', async () => {
    const env = dialerEnv(app, clock);
    const dialer = recordingDialer(env, () => ({ outcome: 'busy', durationSeconds: 0 }));
    const other = await runningCampaign(app, env, { rows: [{ Phone: '+13125550199', 'Consent to call': '2026-10-01' }] });
    await dialer.run(other.campaignId);
    const attempt = await app.prisma.callAttempt.findFirstOrThrow({ where: { campaignId: other.campaignId } });
    expect(attempt).toMatchObject({ consentsRelied: [], rulesVersion: RULES_VERSION });
  });
});

describe('the records export', () => {
  it('lists the records of the range as documented columns, with what each call relied on', async () => {
    const { header, rows } = await exportCsv(setup.token, { from: '2026-11-05T00:00:00Z', to: '2026-11-06T00:00:00Z' });
    expect(header).toEqual([...CALL_RECORD_COLUMNS]);
    expect(rows).toHaveLength(NUMBERS.length);
    const attempt = await attemptTo(NUMBERS[0]!);
    const row = Object.fromEntries(header.map((h, i) => [h, rows.find((r) => r[0] === attempt.id)![i]]));
    expect(row).toMatchObject({
      campaign_id: setup.campaignId,
      from_number: attempt.fromNumber,
      to_number: NUMBERS[0],
      to_number_hash: '',
      placed_at: START.toISOString(),
      ended_at: attempt.endedAt!.toISOString(),
      duration_seconds: '42',
      status: 'completed',
      outcome: 'human',
      consents_relied: `${(attempt.consentsRelied as { id: string }[])[0]!.id}:calls`,
      rules_version: RULES_VERSION,
    });
  });

  it('leaves out calls outside the range and other customers’ calls', async () => {
    expect((await exportCsv(setup.token, { from: '2026-11-06T00:00:00Z', to: '2026-11-07T00:00:00Z' })).rows).toEqual([]);
    const stranger = await app.token(randomUUID());
    expect((await exportCsv(stranger, { from: '2026-11-05T00:00:00Z', to: '2026-11-06T00:00:00Z' })).rows).toEqual([]);
  });

  it('refuses a range that ends before it starts, and a number that is not one, with field errors', async () => {
    const backwards = await app.gql(EXPORT, { input: { from: '2026-11-06T00:00:00Z', to: '2026-11-05T00:00:00Z' } }, setup.token);
    expect(backwards.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fieldErrors: { to: [expect.any(String)] } });
    const input = { from: '2026-11-05T00:00:00Z', to: '2026-11-06T00:00:00Z', phoneNumber: 'not a number' };
    const bad = await app.gql(EXPORT, { input }, setup.token);
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fieldErrors: { phoneNumber: [expect.any(String)] } });
  });
});

describe('erasing the person', () => {
  let attemptId: string;
  let pseudonym: string;

  beforeAll(async () => {
    const attempt = await attemptTo(NUMBERS[1]!);
    attemptId = attempt.id;
    const res = await app.request('DELETE', `/api/v1/contacts/contacts/${attempt.contactId}/`, { token: setup.token });
    expect(res.status).toBe(204);
    const key = await app.prisma.signingKey.findUniqueOrThrow({ where: { name: 'call-record-pseudonyms' } });
    pseudonym = createHmac('sha256', Buffer.from(key.secret)).update(NUMBERS[1]!).digest('hex');
  });

  it('keeps the record, the number replaced by its keyed hash, and no plaintext number anywhere in the row', async () => {
    const [row] = await app.prisma.$queryRaw<Record<string, unknown>[]>`SELECT * FROM call_attempts WHERE id = ${attemptId}::uuid`;
    expect(row).toMatchObject({ to_number: null, to_number_hash: pseudonym, rules_version: RULES_VERSION, status: 'no_answer' });
    expect(row!.consents_relied).toEqual([{ id: expect.any(String), kind: 'calls' }]);
    const text = JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    expect(text).not.toContain('3125550102');
  });

  it('still exports the record, and an auditor holding the number finds it by that number', async () => {
    const input = { from: '2026-11-05T00:00:00Z', to: '2026-11-06T00:00:00Z', phoneNumber: NUMBERS[1] };
    const { header, rows } = await exportCsv(setup.token, input);
    expect(rows).toHaveLength(1);
    const row = Object.fromEntries(header.map((h, i) => [h, rows[0]![i]]));
    expect(row).toMatchObject({ attempt_id: attemptId, to_number: '', to_number_hash: pseudonym, status: 'no_answer' });
    const other = await exportCsv(setup.token, { ...input, phoneNumber: NUMBERS[2] });
    expect(other.rows.map((r) => r[0])).toEqual([(await attemptTo(NUMBERS[2]!)).id]);
  });
});
