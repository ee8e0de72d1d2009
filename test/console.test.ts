import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startDialer, type DialerRuntime } from '../src/jobs/dialer.js';
import { createLogger } from '../src/logger.js';
import { systemClock } from '../src/services/context.js';
import { idleDialer } from '../src/services/dialer/control.js';
import { DEFAULT_DIALER_OPTIONS } from '../src/services/dialer/options.js';
import { inProcessEventBus } from '../src/services/events.js';
import { defaultSettings } from '../src/services/settings.js';
import { idleVoice } from '../src/services/voice/control.js';
import { startTestApp, type TestApp } from './support/app.js';
import { exemptFromRegionalRules, grant } from './support/campaigns.js';
import { openTestDatabase } from './support/database.js';
import { FakeStripe } from './support/fake-stripe.js';

// The web console in a real browser (Debian's Chromium driven by playwright-core), against the whole app
// and a dialer on its job engine in this process, calling through the simulator. The console is the
// built console/dist that `npm install` (and `npm test`) build.

const CHROMIUM = '/usr/bin/chromium';
const inCi = process.env.CI === 'true';
// Outside CI a machine without Chromium skips this file, saying why; in CI it must run (.ci/run installs it).
const browserMissing = !existsSync(CHROMIUM) && !inCi;
if (browserMissing) console.warn(`test/console.test.ts skipped: no browser at ${CHROMIUM} (apt-get install chromium)`);

/** Set (to a folder, like docs/console) to save the pages the journey passes as PNG files there. */
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS;

const LEADS = [
  'First Name,Last Name,Phone,Email',
  'Ada,Lovelace,+14158880101,ada@example.com',
  'Alan,Turing,+14158880102,alan@example.com',
  'Grace,Hopper,call me maybe,grace@example.com',
  'Edsger,Dijkstra,+14158880104,edsger@example.com',
  'Barbara,Liskov,+14158880105,barbara-at-example.com',
  'Donald,Knuth,+14158880106,',
].join('\n');

let app: TestApp;
let dialer: DialerRuntime;
let browser: BrowserContext;
let profile: string;

beforeAll(async () => {
  if (browserMissing) return;
  const db = await openTestDatabase();
  const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const events = inProcessEventBus(log);
  const env = {
    db: db.prisma,
    sql: db.sql,
    clock: systemClock,
    log,
    settings: defaultSettings,
    dialer: idleDialer,
    events,
    voice: idleVoice,
  };
  // Calls last a few tenths of a second: they arrive one after another while the page watches.
  dialer = await startDialer(env, db, {
    telephony: { provider: 'simulated', seed: 'console', timeScale: 0.01 },
    dialer: DEFAULT_DIALER_OPTIONS,
    sweepSeconds: 1,
  });
  app = await startTestApp({ database: db, events, dialer: dialer.control, log, console: true });
  profile = await mkdtemp(join(tmpdir(), 'console-chromium-'));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1200, height: 900 },
  });
  if (SCREENSHOTS) await mkdir(SCREENSHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
  await dialer?.stop();
  await app?.close();
});

/** A customer with credits, whose campaigns may turn the regional rules off (both granted by an administrator). */
async function customer() {
  const id = randomUUID();
  const token = await app.token(id);
  // A user is known from their first request.
  await app.gql('{ creditBalance { balanceCents } }', {}, token);
  await grant(app, id, 5_000);
  await exemptFromRegionalRules(app, id);
  return { id, token };
}

async function logIn(page: Page, token: string) {
  await page.goto(`${app.url}/console/`);
  await page.getByLabel('Token or API key').fill(token);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Campaigns', level: 1 }).waitFor();
}

async function screenshot(page: Page, name: string) {
  if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** The numbers of a chart's table, by row: the figures a screen reader reads. */
async function chartTable(page: Page, chart: string): Promise<string[][]> {
  return page
    .locator(`figure[data-chart="${chart}"] tbody tr`)
    .evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('th, td')].map((cell) => cell.textContent ?? '')));
}

describe.skipIf(browserMissing)('the console', () => {
  let campaignUrl: string;
  let who: Awaited<ReturnType<typeof customer>>;

  it('takes a customer from a CSV file to a dispatched campaign whose calls arrive live and fill the report', async () => {
    who = await customer();
    const page = await browser.newPage();
    await logIn(page, who.token);
    // The token stays in this tab's session only.
    expect(await page.evaluate(() => [sessionStorage.length, localStorage.length])).toEqual([1, 0]);

    // Import: the file's columns are mapped, refused rows are listed with their row and field before anything is sent.
    await page.getByRole('navigation').getByRole('link', { name: 'Contacts' }).click();
    await page.getByRole('link', { name: 'Import a CSV' }).click();
    await page.getByLabel('CSV file').setInputFiles({ name: 'spring-leads.csv', mimeType: 'text/csv', buffer: Buffer.from(LEADS) });
    await expect.poll(() => page.getByLabel('Phone', { exact: true }).inputValue()).toBe('phone_number');
    const refused = page.getByRole('table', { name: 'Refused rows' });
    await refused.waitFor();
    const rows = await refused.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).innerText.split('\t')));
    expect(rows).toEqual([
      ['3', 'phone_number', '"call me maybe" is not a phone number.'],
      ['5', 'email', '"barbara-at-example.com" is not an email address.'],
    ]);
    await expect
      .poll(() => page.getByTestId('import-summary').innerText())
      .toBe('4 of 6 rows will be imported; 2 refused (below), left out.');
    await screenshot(page, 'import');
    await page.getByRole('button', { name: 'Import 4 rows' }).click();
    await page.getByText('Imported 4 contacts').waitFor();
    expect(await app.prisma.contact.count({ where: { group: { userId: who.id, name: 'spring-leads' } } })).toBe(4);

    // An agent from a template: the form is the template's JSON Schema.
    await page.getByRole('navigation').getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('link', { name: 'Create an agent from Appointment Setter' }).click();
    await page.getByLabel('Agent’s name in the console').fill('Front desk');
    await page.getByLabel('Phone number it calls from').fill('+14158889000');
    await page.getByLabel('Agent name (required)').fill('Sam');
    await page.getByLabel('Company name (required)').fill('Acme Dental');
    expect(await page.getByLabel('Meeting length minutes').inputValue()).toBe('30');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('cell', { name: /^ready/ }).waitFor();

    // A campaign over the group, calling at any hour through the simulator.
    await page.getByRole('navigation').getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('link', { name: 'New campaign' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Spring recall');
    await page.getByLabel('Time zone of the calling hours').fill('UTC');
    await page.getByLabel('From', { exact: true }).fill('00:00');
    await page.getByLabel('To', { exact: true }).fill('24:00');
    for (const day of ['Sat', 'Sun']) await page.getByLabel(day, { exact: true }).check();
    await page.getByLabel(/Regional calling rules/).uncheck();
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.getByRole('heading', { name: 'Spring recall', level: 1 }).waitFor();
    campaignUrl = page.url();
    expect(await page.getByTestId('live-count').innerText()).toBe('0 calls so far.');

    // Dispatched from its page, which shows the calls as the server streams them, without a reload.
    await page.getByRole('button', { name: 'Dispatch' }).click();
    await page.getByRole('status').getByText('The campaign is running.').waitFor();
    await page
      .getByTestId('live-count')
      .getByText(/^4 calls so far \(\d+ updated live\)\.$/)
      .waitFor({ timeout: 60_000 });
    // Every call ended, each counted once in the minute it ended, by outcome.
    await expect
      .poll(
        async () => {
          const table = await chartTable(page, 'calls-per-minute');
          const header = await page.locator('figure[data-chart="calls-per-minute"] thead th').allInnerTexts();
          return { inCall: header.includes('in call'), total: table.flatMap((row) => row.slice(1)).reduce((sum, n) => sum + Number(n), 0) };
        },
        { timeout: 60_000 },
      )
      .toEqual({ inCall: false, total: 4 });
    const attempts = await app.prisma.callAttempt.findMany({ where: { campaign: { userId: who.id } } });
    expect(attempts).toHaveLength(4);

    // The report's charts show the calls: the outcome funnel and the calls by outcome.
    await expect.poll(() => page.locator('[data-metric="calls"]').innerText(), { timeout: 30_000 }).toBe('4');
    expect((await chartTable(page, 'funnel')).slice(0, 2)).toEqual([
      ['Contacts', '4'],
      ['Attempted', '4'],
    ]);
    // Calls by outcome: the report's own counts, as the API gives them.
    const campaignId = campaignUrl.split('/').at(-1)!;
    const countedOutcomes = async () => {
      const report = await app.gql(
        'query($id: UUID!) { campaign(id: $id) { report { metrics { outcomes { human voicemail noAnswer busy failed ivr callScreening invalidNumber } } } } }',
        { id: campaignId },
        who.token,
      );
      return Object.values(report.data.campaign.report.metrics.outcomes as Record<string, number>);
    };
    // The report counts each call once its result is written: read it once all four are in.
    await expect.poll(async () => (await countedOutcomes()).reduce((sum, n) => sum + n, 0), { timeout: 30_000 }).toBe(4);
    const outcomes = await countedOutcomes();
    await expect.poll(async () => (await chartTable(page, 'outcomes')).map(([, n]) => Number(n)), { timeout: 30_000 }).toEqual(outcomes);
    expect(await page.locator('figure[data-chart="funnel"] .recharts-bar-rectangle').count()).toBeGreaterThan(0);
    expect(await page.locator('figure[data-chart="calls-per-minute"] .recharts-bar-rectangle').count()).toBeGreaterThan(0);
    await screenshot(page, 'campaign');
    await page.getByRole('navigation').getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('link', { name: 'Spring recall' }).waitFor();
    await screenshot(page, 'campaigns');
    await page.close();
  }, 480_000);

  it('works with the keyboard alone: from the campaigns list to a contact’s calls, every focus visible', async () => {
    const page = await browser.newPage();
    await logIn(page, who.token);

    /** Presses Tab until the focused element is the one named; answers its outline, which must show. */
    async function tabTo(name: string) {
      for (let i = 0; i < 80; i += 1) {
        await page.keyboard.press('Tab');
        const focused = await page.evaluate(() => {
          const el = document.activeElement as HTMLElement;
          return { name: el.innerText?.trim() || el.getAttribute('aria-label'), outline: getComputedStyle(el).outlineStyle };
        });
        if (focused.name === name) return focused.outline;
      }
      throw new Error(`Tab never reached "${name}"`);
    }

    expect(await tabTo('Spring recall')).toBe('solid');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Spring recall', level: 1 }).waitFor();
    expect(await tabTo('spring-leads')).toBe('solid');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'spring-leads', level: 1 }).waitFor();
    expect(await tabTo('Ada Lovelace')).toBe('solid');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Ada Lovelace', level: 1 }).waitFor();
    await page.getByRole('heading', { name: /^Attempt 1, Spring recall$/ }).waitFor();
    expect(await tabTo('Campaigns')).toBe('solid');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Campaigns', level: 1 }).waitFor();
    await page.close();
  }, 120_000);

  it('fits a 320 px wide screen on every page: nothing scrolls sideways', async () => {
    const page = await browser.newPage();
    await page.setViewportSize({ width: 320, height: 640 });
    await logIn(page, who.token);
    const templateId = (await app.prisma.agentTemplate.findFirstOrThrow({ where: { templateKey: 'appointment_setter' } })).id;
    const group = await app.prisma.contactGroup.findFirstOrThrow({ where: { userId: who.id } });
    const contact = await app.prisma.contact.findFirstOrThrow({ where: { groupId: group.id } });
    const campaignPath = new URL(campaignUrl).hash;
    for (const hash of [
      '#/campaigns',
      campaignPath,
      '#/campaigns/new',
      '#/contacts',
      '#/contacts/import',
      `#/groups/${group.id}`,
      `#/contacts/${contact.id}`,
      '#/agents',
      `#/agents/new/${templateId}`,
      '#/billing',
    ]) {
      await page.goto(`${app.url}/console/${hash}`);
      await page.locator('main h1').first().waitFor();
      await page.waitForFunction(() => !document.body.innerText.includes('Loading'));
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(width, hash).toBeLessThanOrEqual(320);
    }
    await page.goto(`${app.url}/console/${campaignPath}`);
    await page.getByRole('heading', { name: 'Report' }).waitFor();
    await screenshot(page, 'campaign-320px');
    await page.close();
  }, 120_000);

  it('runs on a server that runs trusted documents only: the console sends its documents by hash', async () => {
    const { trustedDocuments } = loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS: 'test/generated/gql/persisted-documents.json' }).graphql;
    const trusted = await startTestApp({ trustedDocuments, console: true });
    try {
      const config = await trusted.request('GET', '/console/config.json');
      expect(config.json).toEqual({ trustedDocuments: true, demoToken: null });
      const id = randomUUID();
      await trusted
        .gql('query { agents { totalCount } }', {}, await trusted.token(id))
        .then((r) => expect(r.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_ONLY'));
      const page = await browser.newPage();
      const sent: string[] = [];
      page.on('request', (request) => {
        if (request.url().endsWith('/graphql')) sent.push(request.postData() ?? '');
      });
      await page.goto(`${trusted.url}/console/`);
      await page.getByLabel('Token or API key').fill(await trusted.token(id));
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByText('No campaign yet').waitFor();
      await page.getByRole('navigation').getByRole('link', { name: 'Agents' }).click();
      await page.getByRole('link', { name: 'Create an agent from Appointment Setter' }).waitFor();
      expect(sent.length).toBeGreaterThanOrEqual(2);
      for (const body of sent) expect(JSON.parse(body)).toMatchObject({ extensions: { persistedQuery: { version: 1 } } });
      expect(sent.some((body) => 'query' in JSON.parse(body))).toBe(false);
      await page.close();
    } finally {
      await trusted.close();
    }
  }, 120_000);

  it('buys credits: the billing page opens Stripe Checkout for the amount, and says so when the payer is back', async () => {
    const stripe = await new FakeStripe('sk_test_console').start();
    const checkout = {
      apiKey: 'sk_test_console',
      apiBaseUrl: stripe.url,
      successUrl: 'http://console.test/console/?checkout=success&session_id={CHECKOUT_SESSION_ID}#/billing',
      cancelUrl: 'http://console.test/console/?checkout=cancelled#/billing',
    };
    const shop = await startTestApp({ console: true, settings: { checkout } });
    const page = await browser.newPage();
    try {
      const id = randomUUID();
      // Stripe's page is out of reach here: the browser's visit to it is answered in its place.
      await page.route('https://checkout.stripe.com/**', (route) =>
        route.fulfill({ contentType: 'text/html', body: '<h1>Stripe Checkout</h1>' }),
      );
      await page.goto(`${shop.url}/console/`);
      await page.getByLabel('Token or API key').fill(await shop.token(id));
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('navigation').getByRole('link', { name: 'Billing' }).click();
      await page.getByLabel('Amount in US dollars (5 to 10,000)').fill('25');
      await page.getByRole('button', { name: 'Pay with Stripe' }).click();
      await page.waitForURL(/^https:\/\/checkout\.stripe\.com\//);
      expect(stripe.requests).toHaveLength(1);
      const [session] = [...stripe.sessions.values()];
      expect(session).toMatchObject({ amount_total: 2_500, client_reference_id: id });
      expect(page.url()).toBe(session!.url);

      await page.goto(`${shop.url}/console/?checkout=cancelled#/billing`);
      await page.getByText('The payment was cancelled; nothing was charged.').waitFor();
    } finally {
      await page.close();
      await shop.close();
      await stripe.close();
    }
  }, 120_000);
});

describe('serving the console', () => {
  it('is on in development and off in production unless CONSOLE=true; off, /console/ is the ordinary 404', async () => {
    expect(loadConfig({}).console).toBe(true);
    const production = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) };
    expect(loadConfig(production).console).toBe(false);
    expect(loadConfig({ ...production, CONSOLE: 'true' }).console).toBe(true);
    expect(loadConfig({ CONSOLE: 'false' }).console).toBe(false);

    const off = await startTestApp({ console: loadConfig(production).console });
    try {
      const page = await off.request('GET', '/console/');
      expect(page.status).toBe(404);
      expect(page.json).toEqual({ detail: 'Not found.' });
      expect((await off.request('GET', '/console/config.json')).status).toBe(404);
    } finally {
      await off.close();
    }
  });

  it('serves the built page and its assets, which never go stale, and nothing outside the build', async () => {
    const on = await startTestApp({ console: true, graphiqlToken: 'demo-token' });
    try {
      expect((await on.request('GET', '/console')).headers.get('location')).toBe('/console/');
      const page = await on.request('GET', '/console/');
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('cache-control')).toBe('no-cache');
      expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
      const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(page.text)?.[1];
      expect(script).toBeDefined();
      const asset = await on.request('GET', script!);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect((await on.request('GET', '/console/config.json')).json).toEqual({ trustedDocuments: false, demoToken: 'demo-token' });
      for (const path of [
        '/console/../package.json',
        '/console/%2e%2e/package.json',
        '/console/persisted-documents.json',
        '/console/nothing.js',
      ]) {
        expect((await on.request('GET', path)).status, path).toBe(404);
      }
    } finally {
      await on.close();
    }
  });
});
