import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteDefinition } from '../src/rest/route.js';
import { v1Routes } from '../src/rest/routes/index.js';
import { startTestApp, type TestApp } from './support/app.js';

// A JSON import is read while its body arrives (json-list.ts, importArrivingRows) when its rows come last;
// anything that reading cannot take goes to the whole-body import, which answers as before. Both must
// store the same contacts, and a body that fails part way must leave nothing behind.

const MAX_ROWS = 6_000;

/** How each import through the route's arriving-body handler ended; its batches are counted as they are taken. */
const outcomes: string[] = [];
let batchesTaken = 0;
const importRoute = v1Routes.find((route) => route.operationId === 'importContacts')!;
const arriving = importRoute.streamList!;
const spiedImport: RouteDefinition = {
  ...importRoute,
  streamList: {
    ...arriving,
    async handler(input, items, ctx) {
      async function* counted() {
        for await (const batch of items) {
          batchesTaken += 1;
          yield batch;
        }
      }
      try {
        const result = await arriving.handler(input, counted(), ctx);
        outcomes.push(result === undefined ? 'whole' : 'arriving');
        return result;
      } catch (error) {
        outcomes.push((error as Error).constructor.name);
        throw error;
      }
    },
  },
};

let app: TestApp;
let token: string;
beforeAll(async () => {
  app = await startTestApp({
    settings: { importMaxRows: MAX_ROWS },
    routes: [spiedImport, ...v1Routes.filter((route) => route !== importRoute)],
  });
  token = await app.token();
  await app.gql('mutation { addDoNotCall(input: { phoneNumber: "+1 415 555 0007" }) { phoneNumber } }', {}, token);
});
afterAll(() => app.close());

/** Rows in many number formats with invalid and blocked numbers, duplicates near and far, and a column that first appears late. */
function rows(count: number): Record<string, unknown>[] {
  const formats = [
    (n: string) => `(415) ${n.slice(0, 3)}-${n.slice(3)}`,
    (n: string) => `+1 415 ${n.slice(0, 3)} ${n.slice(3)}`,
    (n: string) => `415.${n}`,
  ];
  return Array.from({ length: count }, (_, i) => {
    const n = `555${String(i % 4000).padStart(4, '0')}`;
    const row: Record<string, unknown> = {
      'First Name': `Person${i}`,
      Phone: i % 97 === 5 ? 'not a number' : formats[i % 3]!(n),
      Score: i % 7,
      Vip: i % 11 === 0,
      Notes: i % 5 ? `note "${i}"\twith\\escapes é 😀` : null,
    };
    if (i >= 3000) row['Other Phone'] = `+1 650 555 ${String(i % 10000).padStart(4, '0')}`;
    return row;
  });
}

async function post(body: string) {
  const res = await fetch(`${app.url}/api/v1/contacts/import/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  });
  return { status: res.status, json: (await res.json()) as any };
}

async function stored(groupId: string) {
  const [group, contacts] = await Promise.all([
    app.prisma.contactGroup.findUniqueOrThrow({ where: { id: groupId }, select: { name: true, total: true, csvHeaders: true } }),
    app.prisma.contact.findMany({
      where: { groupId },
      orderBy: { id: 'asc' },
      select: { phoneNumber: true, status: true, data: true, name: true, timezone: true },
    }),
  ]);
  return { group, contacts };
}

async function counts() {
  const [groups, contacts] = await Promise.all([app.prisma.contactGroup.count(), app.prisma.contact.count()]);
  return { groups, contacts };
}

describe('a JSON import read as it arrives', () => {
  it('stores what the whole-body import stores', async () => {
    const data = rows(MAX_ROWS);
    outcomes.length = 0;
    batchesTaken = 0;
    const streamed = await post(
      JSON.stringify({
        groupName: 'g',
        defaultCountry: 'US',
        selectedHeaders: ['Phone', 'First Name', 'Other Phone', 'Notes', 'Vip'],
        csvData: data,
      }),
    );
    expect(outcomes).toEqual(['arriving']);
    expect(batchesTaken).toBeGreaterThan(10);
    // Rows first: the fields before them are no import, so the whole body is read.
    const whole = await post(
      JSON.stringify({
        csvData: data,
        groupName: 'g',
        defaultCountry: 'US',
        selectedHeaders: ['Phone', 'First Name', 'Other Phone', 'Notes', 'Vip'],
      }),
    );
    expect(outcomes).toEqual(['arriving']);

    expect(streamed.status).toBe(201);
    expect(whole.status).toBe(201);
    const { groupId: streamedId, ...streamedCounts } = streamed.json;
    const { groupId: wholeId, ...wholeCounts } = whole.json;
    expect(streamedCounts).toEqual(wholeCounts);
    // 4,000 numbers, each twice or more; "not a number" merges too, as text.
    expect(streamedCounts).toMatchObject({ totalImported: 3980, totalDuplicates: 2020, totalInvalid: 1, totalDoNotCall: 1 });
    const [a, b] = await Promise.all([stored(streamedId), stored(wholeId)]);
    expect(a).toEqual(b);
    expect(a.group.csvHeaders).toEqual(['First Name', 'Phone', 'Vip', 'Notes', 'Other Phone']);
    // Row 4000 repeats row 0's number long after it was written, and brings a number of its own.
    expect(a.contacts[0]!.data).toMatchObject({ first_name: 'Person0', phone_numbers: [{ number: '+16505554000', label: 'Other Phone' }] });
  });

  it('reads the whole body when a late column changes what an earlier one means', async () => {
    const data: Record<string, unknown>[] = Array.from({ length: 3000 }, (_, i) => ({
      Name: `Ada Lovelace${i}`,
      Phone: `+1 415 555 ${String(i).padStart(4, '0')}`,
    }));
    data.push({ Name: 'Alan', 'First Name': 'Alan', Phone: '+1 650 555 0000' });
    outcomes.length = 0;
    const res = await post(JSON.stringify({ groupName: 'names', csvData: data }));
    expect(outcomes).toEqual(['whole']);
    expect(res.status).toBe(201);
    const { contacts } = await stored(res.json.groupId);
    // With a "First Name" column, "Name" is a custom field for every row, the first ones included.
    expect(contacts[0]!.data).toEqual({ phone_number: '+1 415 555 0000', custom_fields: { Name: 'Ada Lovelace0' } });
  });

  it('reads integers beyond 2^53 exactly, as the whole-body import does', async () => {
    const data: Record<string, unknown>[] = rows(1000);
    const text = JSON.stringify({ groupName: 'big numbers', csvData: data }).replace(/}\]}$/, ',"Account":12345678901234567890123}]}');
    outcomes.length = 0;
    const res = await post(text);
    expect(outcomes).toEqual(['NotStreamable']);
    expect(res.status).toBe(201);
    const { contacts } = await stored(res.json.groupId);
    expect(contacts.at(-1)!.data).toMatchObject({ custom_fields: { Account: '12345678901234567890123' } });
  });
});

describe('a refusal found late in an arriving body', () => {
  const late: [string, (text: string) => string, number, unknown][] = [
    [
      'a nested value in the last row',
      (text) => text.replace(/}\]}$/, ',"Tags":["a"]}]}'),
      400,
      { 'csvData.1999.Tags': ['Expected a text, number or boolean value.'] },
    ],
    [
      'a NUL character in the last row',
      (text) => text.replace(/}\]}$/, ',"Notes":"a\\u0000b"}]}'),
      400,
      { 'csvData.1999.Notes': ['Null characters are not allowed.'] },
    ],
    ['invalid JSON at the end', (text) => text.replace(/}\]}$/, '},]}'), 400, { detail: expect.stringMatching(/^JSON parse error - /) }],
    ['a field after the rows', (text) => text.replace(/}$/, ',"groupName":""}'), 400, { groupName: ['This field may not be blank.'] }],
    ['the body ending inside the rows', (text) => text.slice(0, -3), 400, { detail: expect.stringMatching(/^JSON parse error - /) }],
  ];
  for (const [label, spoil, status, answer] of late) {
    it(`answers ${label} as the whole body would, having written nothing`, async () => {
      const before = await counts();
      const res = await post(spoil(JSON.stringify({ groupName: 'late', csvData: rows(2000) })));
      expect([res.status, res.json]).toEqual([status, answer]);
      expect(await counts()).toEqual(before);
    });
  }

  it('refuses more rows than the limit, having written nothing', async () => {
    const before = await counts();
    const res = await post(JSON.stringify({ groupName: 'too many', csvData: rows(MAX_ROWS + 1) }));
    expect([res.status, res.json]).toEqual([400, { csvData: [`Ensure this import has no more than ${MAX_ROWS} rows.`] }]);
    expect(await counts()).toEqual(before);
  });
});

describe('an arriving body that stops part way', () => {
  it('leaves nothing behind, and the next import goes through', async () => {
    const before = await counts();
    const body = Buffer.from(JSON.stringify({ groupName: 'cut', csvData: rows(MAX_ROWS) }));
    outcomes.length = 0;
    batchesTaken = 0;
    const req = httpRequest(`${app.url}/api/v1/contacts/import/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': body.length },
    });
    req.on('error', () => {});
    req.write(body.subarray(0, body.length >> 1));
    // Some rows are on their way into the database before the client goes away.
    await expect.poll(() => batchesTaken, { timeout: 10_000 }).toBeGreaterThan(3);
    req.destroy();
    await expect.poll(() => outcomes.length, { timeout: 10_000 }).toBe(1);
    expect(outcomes[0]).not.toBe('arriving');
    expect(await counts()).toEqual(before);

    const next = await post(JSON.stringify({ groupName: 'next', csvData: rows(10) }));
    expect(next.status).toBe(201);
    expect(await counts()).toEqual({ groups: before.groups + 1, contacts: before.contacts + 10 });
  });
});

// The do-not-call list's numbers are found once the rows are in; the answer still lists the first 100
// refused rows of every kind together, in row order.
describe('refused rows of several kinds', () => {
  it('are the first 100 of them all, in row order, with every one counted', async () => {
    const listed = Array.from({ length: 60 }, (_, i) => `+1212555${String(1000 + i)}`);
    for (const number of listed) {
      const added = await app.gql(`mutation { addDoNotCall(input: { phoneNumber: "${number}" }) { phoneNumber } }`, {}, token);
      expect(added.errors).toBeUndefined();
    }
    // Rows 1 to 40 invalid, 41 to 100 on the list, 101 to 130 invalid, 131 to 140 callable.
    const phones = [
      ...Array.from({ length: 40 }, (_, i) => `no number ${i}`),
      ...listed,
      ...Array.from({ length: 30 }, (_, i) => `nor this ${i}`),
      ...Array.from({ length: 10 }, (_, i) => `+1312555${String(2000 + i)}`),
    ];
    const res = await post(JSON.stringify({ groupName: 'mixed', csvData: phones.map((Phone) => ({ Phone })) }));
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ totalImported: 140, totalInvalid: 70, totalDoNotCall: 60, totalDuplicates: 0 });
    expect(res.json.refusedRows.map((r: { row: number; reason: string }) => [r.row, r.reason])).toEqual(
      phones.slice(0, 100).map((_, i) => [i + 1, i < 40 ? 'invalid' : 'do_not_call']),
    );
    const { contacts } = await stored(res.json.groupId);
    expect(
      contacts
        .filter((c) => c.status === 'do_not_call')
        .map((c) => c.phoneNumber)
        .sort(),
    ).toEqual(listed);
    expect(contacts.filter((c) => c.status === 'active')).toHaveLength(10);
  });
});
