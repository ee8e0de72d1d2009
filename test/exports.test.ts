import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvCell } from '../src/rest/csv.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, ManualClock, recordingDialer, runningCampaign } from './support/dialer.js';

// CSV exports on v1 (`?format=csv`): every row of the call history and of a campaign's contact outcomes,
// the same values as the JSON pages, read in batches.

let app: TestApp;
let setup: Awaited<ReturnType<typeof runningCampaign>>;
const CONTACTS = 1_150;
const TRICKY_NAME = '=HYPERLINK("x") O"Neil, Jr.\nII';

beforeAll(async () => {
  app = await startTestApp();
  const clock = new ManualClock(new Date('2026-11-05T10:00:00Z'));
  const env = dialerEnv(app, clock);
  const dialer = recordingDialer(env, (_call, index) =>
    index % 3 === 0
      ? { outcome: 'human', durationSeconds: 30 + (index % 50), summary: `Talked, item ${index}` }
      : { outcome: 'no_answer', durationSeconds: 0 },
  );
  const rows = Array.from({ length: CONTACTS }, (_, i) => ({ Phone: `+1415600${String(i).padStart(4, '0')}`, 'First Name': `P${i}` }));
  rows[7] = { Phone: rows[7]!.Phone, 'First Name': TRICKY_NAME };
  setup = await runningCampaign(app, env, {
    rows,
    campaign: { concurrentCalls: 50, scheduleConfig: { max_attempts: 1, max_attempts_per_day: 1, retry_interval_minutes: 60 } },
  });
  await dialer.run(setup.campaignId);
}, 120_000);
afterAll(() => app.close());

/** RFC 4180 as a spreadsheet reads it. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i += 1;
    } else cell += c;
  }
  return rows;
}

/** Every item of a v1 list, page by page. */
async function allPages(path: (offset: number) => string, items: (json: any) => Record<string, unknown>[]) {
  const all: Record<string, unknown>[] = [];
  for (let offset = 0; ; offset += 500) {
    const page = items((await app.request('GET', path(offset), { token: setup.token })).json);
    all.push(...page);
    if (page.length < 500) return all;
  }
}

const asCells = (items: Record<string, unknown>[], columns: string[]) => items.map((item) => columns.map((c) => csvCell(item[c])));

describe('GET /api/v1/campaigns/recordings/?format=csv', () => {
  it('streams every call, newest first, with the JSON fields as its header and values', async () => {
    const res = await app.request('GET', '/api/v1/campaigns/recordings/?format=csv&limit=5', { token: setup.token });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="call-history.csv"');
    const [header, ...rows] = parseCsv(res.text);
    const json = await allPages(
      (offset) => `/api/v1/campaigns/recordings/?limit=500&offset=${offset}`,
      (page) => page,
    );
    expect(json).toHaveLength(CONTACTS);
    expect(header).toEqual(Object.keys(json[0]!));
    expect(rows).toEqual(asCells(json, header!).map((cells) => cells.map((cell) => parseCsv(`${cell}\r\n`)[0]![0])));
  });
});

describe('GET /api/v1/campaigns/{id}/report/?format=csv', () => {
  it("streams every contact's outcome in the report's order, names escaped and formulas defused", async () => {
    const res = await app.request('GET', `/api/v1/campaigns/${setup.campaignId}/report/?format=csv`, { token: setup.token });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="contact-outcomes.csv"');
    const [header, ...rows] = parseCsv(res.text);
    const json = await allPages(
      (offset) => `/api/v1/campaigns/${setup.campaignId}/report/?limit=500&offset=${offset}`,
      (report) => report.contactOutcomes,
    );
    expect(rows).toHaveLength(CONTACTS);
    expect(header).toEqual(['contactId', 'contactName', 'phoneNumber', 'contactStatus', 'attempts', 'lastStatus', 'lastCallAt', 'outcome']);
    expect(rows).toEqual(asCells(json, header!).map((cells) => cells.map((cell) => parseCsv(`${cell}\r\n`)[0]![0])));
    const tricky = rows.find((r) => r[1]!.includes('HYPERLINK'))!;
    expect(tricky[1]).toBe(`'${TRICKY_NAME}`);
    // An E.164 number is left as it is.
    expect(rows[0]![2]).toMatch(/^\+1415600\d{4}$/);
  });

  it("answers another customer's campaign with a 404, as JSON", async () => {
    const stranger = await app.token();
    const res = await app.request('GET', `/api/v1/campaigns/${setup.campaignId}/report/?format=csv`, { token: stranger });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ detail: 'Not found.' });
  });
});

const EXPORT_LINK = 'query ($input: ExportLinkInput!) { exportLink(input: $input) { path expiresAt } }';

describe('a GraphQL export link', () => {
  it('downloads, without a token, what the v1 CSV answers, until it expires; any instance reads it', async () => {
    const other = await startTestApp({ database: { ...app.db, close: async () => {} } });
    try {
      for (const [input, v1] of [
        [{ kind: 'call_history' }, '/api/v1/campaigns/recordings/?format=csv'],
        [{ kind: 'contact_outcomes', campaignId: setup.campaignId }, `/api/v1/campaigns/${setup.campaignId}/report/?format=csv`],
      ] as const) {
        const link = await app.gql(EXPORT_LINK, { input }, setup.token);
        expect(link.errors).toBeUndefined();
        const { path, expiresAt } = link.data.exportLink;
        expect(path).toMatch(/^\/exports\/[\w-]+\.[\w-]+\/$/);
        expect(new Date(expiresAt).getTime() - Date.now()).toBeGreaterThan(14 * 60_000);
        const downloaded = await other.request('GET', path);
        expect(downloaded.status).toBe(200);
        expect(downloaded.text).toBe((await app.request('GET', v1, { token: setup.token })).text);
      }
    } finally {
      await other.close();
    }
  });

  it('is a 404 once expired, forged or altered', async () => {
    const { path } = (await app.gql(EXPORT_LINK, { input: { kind: 'call_history' } }, setup.token)).data.exportLink;
    const [payload, signature] = path.slice('/exports/'.length, -1).split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const stranger = Buffer.from(JSON.stringify({ ...claims, u: '00000000-0000-4000-8000-000000000001' })).toString('base64url');
    const expired = Buffer.from(JSON.stringify({ ...claims, e: Date.now() - 1 })).toString('base64url');
    // Altered: its first character changed (to one it is not: an 'x' stays an 'x' one time in 64).
    const altered = `${signature[0] === 'x' ? 'y' : 'x'}${signature.slice(1)}`;
    for (const bad of [`${stranger}.${signature}`, `${expired}.${signature}`, `${payload}.${altered}`, payload, 'not-a-link']) {
      const res = await app.request('GET', `/exports/${bad}/`);
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ detail: 'Not found.' });
    }
  });

  it('is kept by no cache, nor is the v1 download', async () => {
    const { path } = (await app.gql(EXPORT_LINK, { input: { kind: 'call_history' } }, setup.token)).data.exportLink;
    for (const [url, token] of [
      [path, null],
      ['/api/v1/campaigns/recordings/?format=csv', setup.token],
      [`/api/v1/campaigns/${setup.campaignId}/report/?format=csv`, setup.token],
    ] as const) {
      const res = await app.request('GET', url, { token });
      expect(res.status, url).toBe(200);
      expect(res.headers.get('cache-control'), url).toBe('no-store');
    }
  });

  it('made with an API key, stops working once the key is revoked or expires', async () => {
    const CREATE_KEY = 'mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { secret apiKey { id } } }';
    const keys = await Promise.all(
      ['Revoked', 'Expired', 'Kept'].map(async (name) => {
        const created = await app.gql(CREATE_KEY, { input: { name, scope: 'read' } }, setup.token);
        return created.data.createApiKey as { secret: string; apiKey: { id: string } };
      }),
    );
    const links = await Promise.all(
      keys.map(async ({ secret }) => {
        const link = await app.gql(EXPORT_LINK, { input: { kind: 'contact_outcomes', campaignId: setup.campaignId } }, secret);
        expect(link.errors).toBeUndefined();
        return link.data.exportLink.path as string;
      }),
    );
    for (const path of links) expect((await app.request('GET', path)).status).toBe(200);

    const [revoked, expired] = keys;
    const revoking = await app.gql('mutation ($id: UUID!) { revokeApiKey(id: $id) { id } }', { id: revoked!.apiKey.id }, setup.token);
    expect(revoking.errors).toBeUndefined();
    await app.prisma.apiKey.update({ where: { id: expired!.apiKey.id }, data: { expiresAt: new Date(Date.now() - 1_000) } });

    for (const path of links.slice(0, 2)) {
      const res = await app.request('GET', path);
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ detail: 'Not found.' });
    }
    expect((await app.request('GET', links[2]!)).status).toBe(200);
  });

  it("refuses another customer's campaign and a missing campaign id, making no link", async () => {
    const stranger = await app.token();
    const theirs = await app.gql(EXPORT_LINK, { input: { kind: 'contact_outcomes', campaignId: setup.campaignId } }, stranger);
    expect(theirs.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const missing = await app.gql(EXPORT_LINK, { input: { kind: 'contact_outcomes' } }, setup.token);
    expect(missing.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fieldErrors: { campaignId: [expect.any(String)] } });
  });
});

describe('a CSV cell', () => {
  it('is quoted when it must be, and never starts a formula', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell('=1+1')).toBe("'=1+1");
    expect(csvCell('-3')).toBe("'-3");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('+14155550100')).toBe('+14155550100');
    expect(csvCell('+1 (415)')).toBe("'+1 (415)");
    expect(csvCell(null)).toBe('');
    expect(csvCell(0)).toBe('0');
  });
});
