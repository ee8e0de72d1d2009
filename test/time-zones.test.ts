import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import areaCodes from '../src/services/calling-rules/data/nanp-area-codes.json' with { type: 'json' };
import { CAMPAIGN_FIELDS } from '../src/services/campaigns/inputs.js';
import { isOpen, nextOpening, windowOf } from '../src/services/calling-rules/window.js';
import { localTime, timeZoneName, TZDB_VERSION } from '../src/services/time-zones.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, ManualClock, recordingDialer, runningCampaign } from './support/dialer.js';
import { createAgent } from './support/fixtures.js';

// Every zone and link of the IANA tz database is accepted wherever a zone is given (import columns,
// contact data, a campaign's zone on both surfaces) and computed with; an unknown one is a field error,
// never dropped. Node's ICU lists only CLDR's canonical names (Asia/Calcutta, not Asia/Kolkata).

const tzdb = createRequire(import.meta.url)('tzdata') as { version: string; zones: Record<string, string | unknown[]> };
/** Every name of the tz database but `Factory`, its placeholder for a local time nobody set. */
const ALL_NAMES = Object.keys(tzdb.zones).filter((name) => name !== 'Factory');
const UNKNOWN = 'Unknown time zone: use an IANA name such as America/New_York.';
/** Names that Node's own list of zones lacks, which the import used to drop. */
const REVIEWED = ['Asia/Kolkata', 'Asia/Kathmandu', 'Asia/Yangon', 'Europe/Kyiv', 'Etc/GMT+12'];

describe('the names', () => {
  it('are those of the tz database, zones and backward links, and Node’s own list lacks some of them', () => {
    expect(TZDB_VERSION).toBe(tzdb.version);
    expect(ALL_NAMES.length).toBeGreaterThan(550);
    const listed = new Set(Intl.supportedValuesOf('timeZone'));
    for (const zone of REVIEWED) expect(listed.has(zone), zone).toBe(false);
    for (const name of ALL_NAMES) expect(timeZoneName(name), name).toBe(name);
  });

  it('are read in any case, and anything else is no zone', () => {
    expect(timeZoneName('asia/kolkata')).toBe('Asia/Kolkata');
    expect(timeZoneName('ETC/GMT+12')).toBe('Etc/GMT+12');
    for (const name of ['Mars/Olympus_Mons', 'Factory', '', 'Asia', 'UTC+5', '+05:30', 'IST']) expect(timeZoneName(name), name).toBeNull();
  });

  it('give each zone its own clock, a link its zone’s', () => {
    const at = new Date('2026-06-10T22:05:00Z');
    const offset = (zone: string) => localTime(at, zone).offset;
    expect(REVIEWED.map(offset)).toEqual([330, 345, 390, 180, -720]);
    expect(localTime(at, 'Asia/Kolkata').toFormat('HH:mm')).toBe('03:35');
    for (const [name, target] of Object.entries(tzdb.zones)) {
      if (typeof target === 'string' && name !== 'Factory') expect(offset(name), name).toBe(offset(target));
    }
    expect(() => localTime(at, 'Mars/Olympus_Mons')).toThrow(RangeError);
  });

  it('all work in the calling-window arithmetic', () => {
    const window = windowOf({ start: '09:00', end: '17:00' }, ['mon', 'tue', 'wed', 'thu', 'fri']);
    const at = new Date('2026-11-02T12:00:00Z');
    for (const zone of ALL_NAMES) {
      const opening = nextOpening(at, zone, window);
      expect(isOpen(opening, zone, window), zone).toBe(true);
      if (opening.getTime() !== at.getTime()) expect(localTime(opening, zone).toFormat('HH:mm'), zone).toBe('09:00');
    }
  });

  it('cover every zone of the area-code table', () => {
    const zones = new Set(Object.values(areaCodes.codes as Record<string, { zones: string[] }>).flatMap((c) => c.zones));
    for (const zone of zones) expect(timeZoneName(zone), zone).toBe(zone);
  });
});

describe('inputs that take a zone', () => {
  let app: TestApp;
  let token: string;
  let userId: string;
  beforeAll(async () => {
    app = await startTestApp();
    userId = randomUUID();
    token = await app.token(userId);
  });
  afterAll(() => app.close());

  const importRows = (groupName: string, csvData: Record<string, string>[]) =>
    app.request('POST', '/api/v1/contacts/import/', { token, body: { groupName, csvData } });
  const contactsOf = (groupId: string) =>
    app.prisma.contact.findMany({ where: { groupId }, select: { phoneNumber: true, timezone: true, data: true } });

  it('imports every name of the tz database as the contact’s zone', async () => {
    const rows = ALL_NAMES.map((zone, i) => ({ Phone: `+1415555${String(1000 + i).padStart(4, '0')}`, Timezone: zone }));
    const res = await importRows('Every zone', rows);
    expect(res.status, res.text).toBe(201);
    const zones = new Map((await contactsOf(res.json.groupId)).map((c) => [c.phoneNumber, c.timezone]));
    expect(zones.size).toBe(ALL_NAMES.length);
    for (const row of rows) expect(zones.get(row.Phone), row.Timezone).toBe(row.Timezone);
  });

  it('refuses an import naming a zone that is none, row by row, and writes nothing', async () => {
    const groups = await app.prisma.contactGroup.count({ where: { userId } });
    const rows = [
      { Phone: '+14155550101', TZ: 'asia/kolkata' },
      { Phone: '+14155550102', TZ: 'Mars/Olympus_Mons' },
      { Phone: '+14155550103', TZ: '' },
      { Phone: '+14155550104', TZ: 'IST' },
    ];
    const res = await importRows('Bad zones', rows);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ 'csvData.1.TZ': [UNKNOWN], 'csvData.3.TZ': [UNKNOWN] });
    // The first ten such rows are named, as with rows of other shapes.
    const many = await importRows(
      'Many bad zones',
      Array.from({ length: 12 }, (_, i) => ({ Phone: `+1415555${2000 + i}`, TZ: `Nowhere/${i}` })),
    );
    expect(many.status).toBe(400);
    expect(Object.keys(many.json)).toEqual(Array.from({ length: 10 }, (_, i) => `csvData.${i}.TZ`));
    const file = ['Phone,Time Zone', '+14155550105,Europe/Kyiv', '+14155550106,Nowhere/Town'].join('\n');
    const form = new FormData();
    form.set('groupName', 'Bad file');
    form.set('file', new File([file], 'zones.csv', { type: 'text/csv' }));
    const upload = await app.request('POST', '/api/v1/contacts/import/', { token, raw: form });
    expect(upload.status).toBe(400);
    expect(upload.json).toEqual({ 'file.1.Time Zone': [UNKNOWN] });
    const graphql = await app.gql(
      `mutation($input: ImportContactsInput!) { importContacts(input: $input) { totalImported } }`,
      { input: { groupName: 'Bad rows', rows } },
      token,
    );
    expect(graphql.errors![0]!.extensions).toEqual({
      code: 'BAD_USER_INPUT',
      fieldErrors: { 'rows.1.TZ': [UNKNOWN], 'rows.3.TZ': [UNKNOWN] },
    });
    expect(await app.prisma.contactGroup.count({ where: { userId } })).toBe(groups);

    // Valid, in any case: kept as the tz database spells it.
    const fixed = await importRows('Good zones', [rows[0]!, { ...rows[1]!, TZ: 'Europe/Kyiv' }, rows[2]!]);
    expect(fixed.status, fixed.text).toBe(201);
    const zones = Object.fromEntries(
      (await contactsOf(fixed.json.groupId)).map((c) => [c.phoneNumber, [c.timezone, (c.data as { timezone?: string }).timezone]]),
    );
    expect(zones).toEqual({
      '+14155550101': ['Asia/Kolkata', 'Asia/Kolkata'],
      '+14155550102': ['Europe/Kyiv', 'Europe/Kyiv'],
      '+14155550103': [null, undefined],
    });
  });

  it('takes a zone in a contact’s data, and refuses one that is none without changing the contact', async () => {
    const imported = await importRows('Patched', [{ Phone: '+14155550201' }]);
    const groupId = imported.json.groupId as string;
    const patch = (data: Record<string, unknown>) =>
      app.request('PATCH', `/api/v1/contacts/groups/${groupId}/`, { token, body: { phone_number: '+14155550201', data } });
    const ok = await patch({ timezone: 'Asia/Yangon' });
    expect(ok.status, ok.text).toBe(200);
    const [contact] = await contactsOf(groupId);
    expect(contact!.timezone).toBe('Asia/Yangon');

    const bad = await patch({ tz: 'Atlantis/Capital', first_name: 'Nemo' });
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({ 'data.tz': [UNKNOWN] });
    const id = (await app.prisma.contact.findFirstOrThrow({ where: { groupId } })).id;
    const graphql = await app.gql(
      `mutation($id: UUID!, $input: UpdateContactInput!) { updateContact(id: $id, input: $input) { timezone } }`,
      { id, input: { data: { timezone: 'Europe/Atlantis', first_name: 'Nemo' } } },
      token,
    );
    expect(graphql.errors![0]!.extensions).toEqual({ code: 'BAD_USER_INPUT', fieldErrors: { 'data.timezone': [UNKNOWN] } });
    expect(await contactsOf(groupId)).toEqual([contact]);

    const kathmandu = await app.gql(
      `mutation($id: UUID!, $input: UpdateContactInput!) { updateContact(id: $id, input: $input) { timezone } }`,
      { id, input: { data: { timezone: 'asia/kathmandu' } } },
      token,
    );
    expect(kathmandu.data).toEqual({ updateContact: { timezone: 'Asia/Kathmandu' } });
  });

  it('takes every zone as a campaign’s on both surfaces, and refuses one that is none without a change', async () => {
    const agent = await createAgent(app, token);
    const group = (await importRows('For campaigns', [{ Phone: '+14155550301' }])).json.groupId as string;
    const created = await app.request('POST', '/api/v1/contacts/contacts/', {
      token,
      body: { name: 'Kolkata', agent_id: agent.id, contact_group_id: group, timezone: 'Asia/Kolkata' },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json.timezone).toBe('Asia/Kolkata');
    const campaignId = created.json.id as string;

    const UPDATE = `mutation($id: UUID!, $input: UpdateCampaignInput!) { updateCampaign(id: $id, input: $input) { timezone } }`;
    for (const zone of REVIEWED) {
      const updated = await app.gql(UPDATE, { id: campaignId, input: { timezone: zone } }, token);
      expect(updated.data, zone).toEqual({ updateCampaign: { timezone: zone } });
    }
    // The whole list through the input both surfaces share (a request each would take minutes).
    for (const zone of ALL_NAMES) expect(CAMPAIGN_FIELDS.timezone.parse(zone), zone).toBe(zone);
    const refused = await app.gql(UPDATE, { id: campaignId, input: { timezone: 'Factory' } }, token);
    expect(refused.errors![0]!.extensions).toEqual({ code: 'BAD_USER_INPUT', fieldErrors: { timezone: [UNKNOWN] } });
    const campaigns = await app.prisma.campaign.count({ where: { userId } });
    const rest = await app.request('POST', '/api/v1/contacts/contacts/', {
      token,
      body: { name: 'Nowhere', agent_id: agent.id, contact_group_id: group, timezone: 'Mars/Olympus_Mons' },
    });
    expect(rest.status).toBe(400);
    expect(rest.json).toEqual({ timezone: [UNKNOWN] });
    expect(await app.prisma.campaign.count({ where: { userId } })).toBe(campaigns);
    expect((await app.prisma.campaign.findUniqueOrThrow({ where: { id: campaignId } })).timezone).toBe('Etc/GMT+12');
  });

  it('calls a contact in Kolkata by Kolkata’s clock, not its number’s', async () => {
    // 22:05 UTC on Monday 2 November: 17:05 in New York, 03:35 on Tuesday in Kolkata.
    const clock = new ManualClock(new Date('2026-11-02T22:05:00Z'));
    const env = dialerEnv(app, clock);
    const setup = await runningCampaign(app, env, {
      rows: [
        { Phone: '+12125550401', Timezone: 'Asia/Kolkata' },
        { Phone: '+12125550402', Timezone: 'America/New_York' },
      ],
      campaign: { callingHours: { start: '09:00', end: '21:00' }, timezone: 'UTC' },
    });
    const run = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 30 }));
    await run.run(setup.campaignId);
    expect(run.telephony.placed.map((c) => c.to)).toEqual(['+12125550402']);
    const waiting = await app.prisma.campaignContact.findFirstOrThrow({
      where: { campaignId: setup.campaignId, contact: { phoneNumber: '+12125550401' } },
    });
    // 09:00 in Kolkata is 03:30 UTC.
    expect(waiting.nextAttemptAt).toEqual(new Date('2026-11-03T03:30:00Z'));
    clock.set('2026-11-03T03:30:00Z');
    await run.run(setup.campaignId);
    expect(run.telephony.placed.map((c) => c.to)).toEqual(['+12125550402', '+12125550401']);
  });

  it('gives contacts whose zone the import dropped before their zone back', async () => {
    const imported = await importRows('Dropped before', [{ Phone: '+14155550501' }, { Phone: '+14155550502' }, { Phone: '+14155550503' }]);
    const groupId = imported.json.groupId as string;
    // As the import left them: the zone in the data, none in the column.
    const given: Record<string, string> = { '+14155550501': 'Asia/Kolkata', '+14155550502': 'europe/kyiv', '+14155550503': 'Mars/Olympus' };
    for (const [phone, zone] of Object.entries(given)) {
      await app.prisma.$executeRaw`UPDATE contacts SET data = jsonb_set(data, '{timezone}', to_jsonb(${zone}::text)), timezone = NULL
        WHERE contact_group_id = ${groupId}::uuid AND phone_number = ${phone}`;
    }
    const migration = await readFile(
      new URL('../prisma/migrations/20261128235500_contact_time_zones/migration.sql', import.meta.url),
      'utf8',
    );
    await app.prisma.$executeRawUnsafe(migration);
    const zones = Object.fromEntries((await contactsOf(groupId)).map((c) => [c.phoneNumber, c.timezone]));
    expect(zones).toEqual({ '+14155550501': 'Asia/Kolkata', '+14155550502': 'Europe/Kyiv', '+14155550503': null });
  });
});
