import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/services/context.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, recordingDialer, runningCampaign } from './support/dialer.js';

// Outside do-not-call lists (a registry extract, a suppression file): their numbers join the customer's
// list, and no campaign of the customer dials them.

const IMPORT = /* GraphQL */ `
  mutation ($input: ImportDoNotCallListInput!) {
    importDoNotCallList(input: $input) {
      listed
      alreadyListed
      invalid
    }
  }
`;

describe('an imported do-not-call list', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('keeps the campaigns from dialing its numbers, and says what it did with each entry', async () => {
    const env = dialerEnv(app, systemClock);
    const setup = await runningCampaign(app, env, {
      rows: [{ Phone: '+14156400001' }, { Phone: '+14156400002' }, { Phone: '+14156400003' }],
      doNotCall: ['+14156400009'],
    });
    const result = await app.gql(
      IMPORT,
      // The first two in other spellings of the same numbers; one already listed; one no number at all.
      { input: { name: 'State registry, November', numbers: ['(415) 640-0001', '+1 415 640 0002', '+14156400009', 'call me'] } },
      setup.token,
    );
    expect(result.errors).toBeUndefined();
    expect(result.data.importDoNotCallList).toEqual({ listed: 2, alreadyListed: 1, invalid: 1 });

    const entries = await app.prisma.doNotCallEntry.findMany({ where: { userId: setup.userId, source: 'registry' } });
    expect(entries.map((e) => e.phoneNumber).sort()).toEqual(['+14156400001', '+14156400002']);
    expect(entries[0]!.reason).toBe('On the list "State registry, November"');

    const run = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 30 }));
    await run.run(setup.campaignId);
    expect(run.telephony.placed.map((c) => c.to)).toEqual(['+14156400003']);
    const outcomes = await app.prisma.campaignContact.findMany({ where: { campaignId: setup.campaignId }, include: { contact: true } });
    expect(Object.fromEntries(outcomes.map((o) => [o.contact.phoneNumber, o.outcome]))).toEqual({
      '+14156400001': 'do_not_call',
      '+14156400002': 'do_not_call',
      '+14156400003': 'reached',
    });
  });

  it('refuses a list without a name or numbers, with field errors, and lists nothing', async () => {
    const token = await app.token();
    for (const [input, field] of [
      [{ name: '', numbers: ['+14156400101'] }, 'name'],
      [{ name: 'x'.repeat(101), numbers: ['+14156400101'] }, 'name'],
      [{ name: 'Empty', numbers: [] }, 'numbers'],
      [{ name: 'Long', numbers: ['1'.repeat(33)] }, 'numbers.0'],
    ] as const) {
      const result = await app.gql(IMPORT, { input }, token);
      expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(Object.keys(result.errors![0]!.extensions!.fieldErrors)).toEqual([field]);
    }
    const listed = await app.gql(`{ doNotCallEntries(first: 5) { totalCount } }`, {}, token);
    expect(listed.data.doNotCallEntries.totalCount).toBe(0);
  });
});

describe('an opt-out reported by the agent runtime', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  const REPORT = `mutation ($id: UUID!) { reportOptOut(callAttemptId: $id) { phoneNumber source reason } }`;

  it('lists the number of the call at once, once, and only for the call’s owner', async () => {
    const env = dialerEnv(app, systemClock);
    const setup = await runningCampaign(app, env, { rows: [{ Phone: '+14156400201' }, { Phone: '+14156400202' }] });
    const run = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 30 }));
    await run.run(setup.campaignId);
    const call = await app.prisma.callAttempt.findFirstOrThrow({ where: { campaignId: setup.campaignId, toNumber: '+14156400201' } });

    const stranger = await app.token();
    expect((await app.gql(REPORT, { id: call.id }, stranger)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(await app.prisma.doNotCallEntry.count({ where: { userId: setup.userId } })).toBe(0);

    for (let i = 0; i < 2; i += 1) {
      const { data, errors } = await app.gql(REPORT, { id: call.id }, setup.token);
      expect(errors).toBeUndefined();
      expect(data.reportOptOut).toEqual({ phoneNumber: '+14156400201', source: 'call', reason: 'Asked during a call' });
    }
    expect(await app.prisma.doNotCallEntry.count({ where: { userId: setup.userId } })).toBe(1);
    const contact = await app.prisma.contact.findFirstOrThrow({ where: { userId: setup.userId, phoneNumber: '+14156400201' } });
    expect(contact.status).toBe('do_not_call');
  });
});
