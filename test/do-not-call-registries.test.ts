import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { serviceContext, systemClock, type ServiceEnv } from '../src/services/context.js';
import { dispatchCampaign } from '../src/services/campaigns/dispatch.js';
import { importRegistry } from '../src/services/registries/registries.js';
import { lookUp } from '../src/services/registries/store.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createAgent } from './support/fixtures.js';
import { dialerEnv, ManualClock, recordingDialer, runningCampaign } from './support/dialer.js';

// National do-not-call registries: shared data an administrator loads, whole and at once; solicitation
// does not call their numbers without a consent or a business relationship, nor at all on a stale copy.

const IMPORT = /* GraphQL */ `
  mutation ($input: ImportDoNotCallRegistryInput!) {
    importDoNotCallRegistry(input: $input) {
      registry
      downloadedOn
      numbers
      areaCodes
      importedBy
      ageDays
      maxAgeDays
      stale
    }
  }
`;

const LIST = `{ doNotCallRegistries { registry numbers downloadedOn stale } }`;

/** A GraphQL multipart request carrying the file. */
function upload(app: TestApp, token: string, input: { registry: string; downloadedOn: string }, text: string) {
  const form = new FormData();
  form.set('operations', JSON.stringify({ query: IMPORT, variables: { input: { ...input, file: null } } }));
  form.set('map', JSON.stringify({ 0: ['variables.input.file'] }));
  form.set('0', new Blob([text], { type: 'text/plain' }), 'registry.txt');
  return fetch(`${app.url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'x-graphql-yoga-csrf': '1' },
    body: form,
  }).then(async (r) => (await r.json()) as { data?: any; errors?: any[] });
}

/** An import through the service, from lines of text. */
function load(env: Pick<ServiceEnv, 'sql' | 'clock'>, registry: string, downloadedOn: string, lines: string[]) {
  return importRegistry(env, { registry, downloaded_on: downloadedOn }, [lines.join('\n') + '\n'], 'test');
}

const today = () => systemClock.now().toISOString().slice(0, 10);

describe('importing a registry', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('is for administrators only: anyone else is refused and changes nothing', async () => {
    const customer = await app.token();
    const refused = await upload(app, customer, { registry: 'us_dnc', downloadedOn: today() }, '2025550101\n');
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await app.gql(LIST, {}, customer)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const admin = await app.token(randomUUID(), 'admin');
    expect((await app.gql(LIST, {}, admin)).data.doNotCallRegistries).toEqual([]);
    expect(await lookUp(app.sql, '+12025550101')).toBeNull();
  });

  it('loads each format, records the download date, and answers lookups by E.164 number', async () => {
    const admin = await app.token(randomUUID(), 'admin');
    const us = await upload(app, admin, { registry: 'us_dnc', downloadedOn: today() }, '2025550101\r\n202,5550102\n\n3125550103');
    expect(us.errors).toBeUndefined();
    expect(us.data.importDoNotCallRegistry).toMatchObject({
      registry: 'us_dnc',
      downloadedOn: today(),
      numbers: 3,
      areaCodes: ['202', '312'],
      ageDays: 0,
      maxAgeDays: 31,
      stale: false,
    });
    const ca = await upload(app, admin, { registry: 'ca_dncl', downloadedOn: today() }, '4165550104\n');
    expect(ca.data.importDoNotCallRegistry).toMatchObject({ numbers: 1, areaCodes: ['416'], maxAgeDays: 31 });
    const tps = await upload(app, admin, { registry: 'uk_tps', downloadedOn: today() }, '02079460105\n01632960106\n');
    expect(tps.data.importDoNotCallRegistry).toMatchObject({ numbers: 2, areaCodes: ['016', '020'], maxAgeDays: 28 });
    const ctps = await upload(app, admin, { registry: 'uk_ctps', downloadedOn: today() }, '02079460107\n');
    expect(ctps.data.importDoNotCallRegistry).toMatchObject({ numbers: 1, maxAgeDays: 28 });

    expect(await lookUp(app.sql, '+12025550101')).toBe('us_dnc');
    expect(await lookUp(app.sql, '+12025550102')).toBe('us_dnc');
    expect(await lookUp(app.sql, '+14165550104')).toBe('ca_dncl');
    expect(await lookUp(app.sql, '+442079460105')).toBe('uk_tps');
    expect(await lookUp(app.sql, '+441632960106')).toBe('uk_tps');
    expect(await lookUp(app.sql, '+442079460107')).toBe('uk_ctps');
    expect(await lookUp(app.sql, '+12025550199')).toBeNull();
    const listed = (await app.gql(LIST, {}, admin)).data.doNotCallRegistries;
    expect(listed.map((c: { registry: string }) => c.registry).sort()).toEqual(['ca_dncl', 'uk_ctps', 'uk_tps', 'us_dnc']);
  });

  it('refuses a bad file with the numbers of its bad lines, and keeps the copy in force', async () => {
    const admin = await app.token(randomUUID(), 'admin');
    await upload(app, admin, { registry: 'us_dnc', downloadedOn: today() }, '2025550201\n');
    const bad = await upload(
      app,
      admin,
      { registry: 'us_dnc', downloadedOn: today() },
      '2025550202\n12025550203\n2025550204\n202555020\n0125550205\n+12025550206\n',
    );
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const messages: string[] = bad.errors![0].extensions.fieldErrors.file;
    expect(messages.map((m) => m.split(':')[0])).toEqual(['Line 2', 'Line 4', 'Line 5', 'Line 6']);
    expect(messages[0]).toContain('is not a 10-digit US number');

    const uk = await upload(app, admin, { registry: 'uk_tps', downloadedOn: today() }, '02079460208\n2079460209\n');
    expect(uk.errors?.[0]?.extensions?.fieldErrors).toEqual({
      file: ['Line 2: "2079460209" is not a UK number in national format starting with 0 (e.g. 02079460000).'],
    });
    const future = await upload(app, admin, { registry: 'us_dnc', downloadedOn: '2999-01-01' }, '2025550210\n');
    expect(future.errors?.[0]?.extensions?.fieldErrors).toEqual({ downloadedOn: ['Must not be in the future.'] });
    const notADate = await upload(app, admin, { registry: 'us_dnc', downloadedOn: '20/11/2026' }, '2025550211\n');
    expect(Object.keys(notADate.errors?.[0]?.extensions?.fieldErrors)).toEqual(['downloadedOn']);

    // Nothing of the refused files was loaded: the copy in force is the one before them.
    expect(await lookUp(app.sql, '+12025550201')).toBe('us_dnc');
    for (const number of ['+12025550202', '+12025550204', '+12025550210', '+12025550211']) expect(await lookUp(app.sql, number)).toBeNull();
    expect(await app.prisma.registryImport.count({ where: { registry: 'us_dnc', numbers: { not: 1 } } })).toBe(1);
  });

  it('replaces the copy whole: a lookup during an import sees the old copy, then only the new one', async () => {
    const env = dialerEnv(app, systemClock);
    await load(env, 'ca_dncl', today(), ['4165550301', '4165550302']);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let halfway!: () => void;
    const reachedHalfway = new Promise<void>((resolve) => (halfway = resolve));
    async function* file() {
      yield '4165550302\n4165550303\n';
      halfway();
      await released;
      yield '4165550304\n4165550302\n'; // listed twice: kept once
    }
    const importing = importRegistry(env, { registry: 'ca_dncl', downloaded_on: today() }, file(), 'test');
    await reachedHalfway;
    if (app.db.kind === 'postgres') {
      // The half loaded is in a table no lookup reads until the swap.
      expect(await lookUp(app.sql, '+14165550301')).toBe('ca_dncl');
      expect(await lookUp(app.sql, '+14165550303')).toBeNull();
    }
    release();
    expect((await importing).numbers).toBe(3n);
    expect(await lookUp(app.sql, '+14165550301')).toBeNull();
    for (const number of ['+14165550302', '+14165550303', '+14165550304']) expect(await lookUp(app.sql, number)).toBe('ca_dncl');
  });
});

describe('calling numbers on a registry', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  const ON_REGISTRY = ['+14156500001', '+14156500002', '+14156500003', '+14156500004'];
  const FREE = '+14156500009';

  it('blocks them for solicitation unless the contact consented or has a recent business relationship', async () => {
    const clock = new ManualClock(new Date('2026-11-20T15:00:00Z'));
    const env = dialerEnv(app, clock);
    await load(
      env,
      'us_dnc',
      '2026-11-19',
      ON_REGISTRY.map((n) => n.slice(2)),
    );
    const setup = await runningCampaign(app, env, { rows: [...ON_REGISTRY, FREE].map((Phone) => ({ Phone })) });
    const contacts = await app.prisma.contact.findMany({ where: { userId: setup.userId } });
    const id = (phone: string) => contacts.find((c) => c.phoneNumber === phone)!.id;
    const consent = (phone: string, kind: 'calls' | 'business_relationship' | 'ai_calls', obtainedAt: string) =>
      app.prisma.contactConsent.create({
        data: { userId: setup.userId, contactId: id(phone), kind, source: 'test', obtainedAt: new Date(obtainedAt) },
      });
    await consent(ON_REGISTRY[0]!, 'calls', '2026-01-01T00:00:00Z');
    await consent(ON_REGISTRY[1]!, 'business_relationship', '2025-06-01T00:00:00Z'); // 17 months ago: still holds
    await consent(ON_REGISTRY[2]!, 'business_relationship', '2025-05-01T00:00:00Z'); // 18 months ago: over
    await consent(ON_REGISTRY[3]!, 'ai_calls', '2026-01-01T00:00:00Z'); // not a consent to calls

    const run = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 30 }));
    await run.run(setup.campaignId);
    expect(run.telephony.placed.map((c) => c.to).sort()).toEqual([ON_REGISTRY[0], ON_REGISTRY[1], FREE]);
    const blocks = await app.prisma.dialBlock.findMany({ where: { campaignId: setup.campaignId } });
    expect(blocks.map((b) => [b.contactId, b.reason, b.detail, b.until]).sort()).toEqual(
      [
        [id(ON_REGISTRY[2]!), 'registry', 'us_dnc', null],
        [id(ON_REGISTRY[3]!), 'registry', 'us_dnc', null],
      ].sort(),
    );
    const enrolments = await app.prisma.campaignContact.findMany({
      where: { campaignId: setup.campaignId, contactId: id(ON_REGISTRY[2]!) },
    });
    expect(enrolments.map((e) => [e.state, e.outcome])).toEqual([['done', 'do_not_call']]);
  });

  it('calls them for an informational campaign', async () => {
    const clock = new ManualClock(new Date('2026-11-20T15:00:00Z'));
    const env = dialerEnv(app, clock);
    await load(
      env,
      'us_dnc',
      '2026-11-19',
      ON_REGISTRY.map((n) => n.slice(2)),
    );
    const setup = await runningCampaign(app, env, {
      rows: ON_REGISTRY.map((Phone) => ({ Phone })),
      campaign: { purpose: 'informational' },
    });
    const run = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 30 }));
    await run.run(setup.campaignId);
    expect(run.telephony.placed.map((c) => c.to).sort()).toEqual(ON_REGISTRY);
    expect(await app.prisma.dialBlock.count({ where: { campaignId: setup.campaignId } })).toBe(0);
  });
});

describe('a campaign’s purpose', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('is solicitation unless it says otherwise, set on GraphQL and v1, and kept by a clone', async () => {
    const userId = randomUUID();
    const token = await app.token(userId);
    const agent = await createAgent(app, token);
    const group = await app.prisma.contactGroup.create({ data: { userId, name: 'Purpose group' } });
    const create = `mutation ($input: CreateCampaignInput!) { createCampaign(input: $input) { id purpose } }`;
    const made = await app.gql(create, { input: { name: 'Sales', agentId: agent.id, contactGroupId: group.id } }, token);
    expect(made.data.createCampaign.purpose).toBe('solicitation');
    const update = `mutation ($id: UUID!, $input: UpdateCampaignInput!) { updateCampaign(id: $id, input: $input) { purpose } }`;
    const changed = await app.gql(update, { id: made.data.createCampaign.id, input: { purpose: 'informational' } }, token);
    expect(changed.data.updateCampaign.purpose).toBe('informational');
    const wrong = await app.gql(update, { id: made.data.createCampaign.id, input: { purpose: 'sales' } }, token);
    expect(wrong.errors?.[0]?.message).toContain('CampaignPurpose');
    const clone = await app.gql(`mutation ($id: UUID!) { cloneCampaign(id: $id) { purpose } }`, { id: made.data.createCampaign.id }, token);
    expect(clone.data.cloneCampaign.purpose).toBe('informational');

    const v1 = await app.request('POST', '/api/v1/contacts/contacts/', {
      token,
      body: { name: 'Reminders', agent_id: agent.id, contact_group_id: group.id, purpose: 'informational' },
    });
    expect(v1.status).toBe(201);
    expect(v1.json).not.toHaveProperty('purpose');
    expect((await app.prisma.campaign.findUniqueOrThrow({ where: { id: v1.json.id } })).purpose).toBe('informational');
    const refused = await app.request('POST', '/api/v1/contacts/contacts/', {
      token,
      body: { name: 'Odd', agent_id: agent.id, contact_group_id: group.id, purpose: 'sales' },
    });
    expect(refused.status).toBe(400);
    expect(Object.keys(refused.json)).toEqual(['purpose']);
  });
});

describe('a registry copy too old', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('refuses to dispatch solicitation and stops its calls, naming the registry and its age, until refreshed', async () => {
    const clock = new ManualClock(new Date('2026-12-01T15:00:00Z'));
    const env = dialerEnv(app, clock);
    await load(env, 'us_dnc', '2026-10-31', ['2025550401']); // 31 days old on 1 December: still good
    const setup = await runningCampaign(app, env, { rows: [{ Phone: '+14156500401' }, { Phone: '+14156500402' }] });
    const run = recordingDialer(env, () => ({ outcome: 'no_answer', durationSeconds: 0 }));
    await run.run(setup.campaignId);
    expect(run.telephony.placed).toHaveLength(2);

    clock.set('2026-12-02T15:00:00Z'); // 32 days old
    await app.prisma.campaignContact.updateMany({ where: { campaignId: setup.campaignId }, data: { nextAttemptAt: clock.now() } });
    await run.run(setup.campaignId);
    expect(run.telephony.placed).toHaveLength(2);
    const paused = await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId } });
    expect([paused.status, paused.pausedReason]).toEqual(['paused', 'registry_stale']);

    const ctx = serviceContext(env, { id: setup.userId, isAdmin: false });
    const refused = await dispatchCampaign(ctx, setup.campaignId, { triggeredBy: 'test' }).catch((error: unknown) => error);
    expect(refused).toMatchObject({
      reason: 'registry_stale',
      message: expect.stringContaining('the copy of the US National Do Not Call Registry is 32 days old (at most 31)'),
    });

    // Informational calls go on.
    const informational = await runningCampaign(app, env, {
      rows: [{ Phone: '+14156500403' }],
      campaign: { purpose: 'informational', status: 'paused' },
    });
    await expect(dispatchCampaign(informational.ctx, informational.campaignId, { triggeredBy: 'test' })).resolves.toMatchObject({
      status: 'running',
    });

    // A fresh copy lets the campaign go on.
    await load(env, 'us_dnc', '2026-12-01', ['2025550401']);
    await expect(dispatchCampaign(ctx, setup.campaignId, { triggeredBy: 'test' })).resolves.toMatchObject({ status: 'running' });
    await run.run(setup.campaignId);
    expect(run.telephony.placed).toHaveLength(4);
  });

  it('holds TPS and CTPS to 28 days', async () => {
    const clock = new ManualClock(new Date('2026-11-29T12:00:00Z'));
    const env = dialerEnv(app, clock);
    await load(env, 'us_dnc', '2026-11-28', ['2025550501']);
    await load(env, 'uk_ctps', '2026-11-01', ['02079460501']); // 28 days old: still good
    const setup = await runningCampaign(app, env, { rows: [{ Phone: '+442079460502' }], campaign: { status: 'paused' } });
    await expect(dispatchCampaign(setup.ctx, setup.campaignId, { triggeredBy: 'test' })).resolves.toMatchObject({ status: 'running' });
    clock.set('2026-11-30T12:00:00Z'); // 29 days old
    await app.prisma.campaign.update({ where: { id: setup.campaignId }, data: { status: 'paused' } });
    const refused = await dispatchCampaign(setup.ctx, setup.campaignId, { triggeredBy: 'test' }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ reason: 'registry_stale', message: expect.stringContaining('UK CTPS is 29 days old (at most 28)') });
  });
});

// The CLI reaches the database through DATABASE_URL: the test's own on PostgreSQL (PGlite's is in this process).
describe.runIf(inject('testDatabase').kind === 'postgres')('npm run registry:import', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  const cli = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const { connectionString } = app.db.jobEngineConnection as { connectionString: string };
      execFile(
        'node_modules/.bin/tsx',
        ['src/cli/registry-import.ts', ...args],
        { env: { ...process.env, DATABASE_URL: connectionString } },
        (error, stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
      );
    });

  it('streams a file in as the registry’s copy, and refuses a bad one with its line numbers, changing nothing', async () => {
    const good = join(tmpdir(), `registry-cli-${randomUUID()}.txt`);
    const bad = join(tmpdir(), `registry-cli-${randomUUID()}.txt`);
    await writeFile(good, '02079460601\n02079460602\n');
    await writeFile(bad, '02079460603\n2079460604\n');
    try {
      const loaded = await cli(['--registry', 'uk-tps', '--downloaded', today(), '--by', 'ops', good]);
      expect(loaded.code).toBe(0);
      expect(loaded.stdout).toContain(`uk_tps: 2 numbers downloaded on ${today()}, in force now`);
      const refused = await cli(['--registry', 'uk-tps', '--downloaded', today(), bad]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('file: Line 2: "2079460604" is not a UK number');
      expect(refused.stderr).toContain('Nothing was changed.');
      expect(await lookUp(app.sql, '+442079460601')).toBe('uk_tps');
      expect(await lookUp(app.sql, '+442079460603')).toBeNull();
      expect(await app.prisma.registryImport.findMany({ select: { registry: true, numbers: true, importedBy: true } })).toEqual([
        { registry: 'uk_tps', numbers: 2n, importedBy: 'ops' },
      ]);
    } finally {
      await Promise.all([rm(good, { force: true }), rm(bad, { force: true })]);
    }
  });
});
