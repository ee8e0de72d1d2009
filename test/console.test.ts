import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import Stripe from 'stripe';
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
import { ProviderError, type VoiceProvider } from '../src/services/voice/provider.js';
import { SimulatedVoiceProvider } from '../src/services/voice/providers/simulated/agents.js';
import { provisionAgent } from '../src/services/voice/provisioning.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dispatch, exemptFromRegionalRules, grant, importGroup } from './support/campaigns.js';
import { openTestDatabase } from './support/database.js';
import { dialerEnv, recordingDialer } from './support/dialer.js';
import { FakeStripe } from './support/fake-stripe.js';
import { createAgent } from './support/fixtures.js';

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
/** The app of the tests that run provisioning and calls themselves (below). */
let held: TestApp | undefined;
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

// The apps close after the browser: a server's close waits for every connection that has not finished a
// request, and Chromium opens some ahead of time that only its close ends.
afterAll(async () => {
  await browser?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
  await dialer?.stop();
  await app?.close();
  await held?.close();
});

/** A customer with credits, whose campaigns may turn the regional rules off (both granted by an administrator). */
async function customer(on: TestApp = app) {
  const id = randomUUID();
  const token = await on.token(id);
  // A user is known from their first request.
  await on.gql('{ creditBalance { balanceCents } }', {}, token);
  await grant(on, id, 5_000);
  await exemptFromRegionalRules(on, id);
  return { id, token };
}

async function logIn(page: Page, token: string, on: TestApp = app) {
  await page.goto(`${on.url}/console/`);
  await page.getByLabel('Token or API key').fill(token);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Campaigns', level: 1 }).waitFor();
}

async function screenshot(page: Page, name: string) {
  if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** A table's rows as the page shows them, each a list of its cells' text. */
async function tableRows(page: Page, name: string): Promise<string[][]> {
  return page
    .getByRole('table', { name })
    .locator('tbody tr')
    .evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('th, td')].map((cell) => (cell as HTMLElement).innerText.trim())));
}

/** Fills the new-campaign form's calling hours: all day, every day, regional rules off (the customer is exempt). */
async function callAnyTime(page: Page) {
  await page.getByLabel('Time zone of the calling hours').fill('UTC');
  await page.getByLabel('From', { exact: true }).fill('00:00');
  await page.getByLabel('To', { exact: true }).fill('24:00');
  for (const day of ['Sat', 'Sun']) await page.getByLabel(day, { exact: true }).check();
  await page.getByLabel(/Regional calling rules/).uncheck();
}

/** Marks the page, so that a test can tell later that what changed on it came without a reload. */
const markPage = (page: Page) => page.evaluate(() => Object.assign(window, { notReloaded: true }));
const stillMarked = (page: Page) => page.evaluate(() => (window as { notReloaded?: boolean }).notReloaded === true);

const SPLIT_LABEL = 'Split the contacts between agents: each contact is given one variant, by weight, the same on every call';
const UPDATE_CAMPAIGN = 'mutation($id: UUID!, $input: UpdateCampaignInput!) { updateCampaign(id: $id, input: $input) { id } }';
const HISTORY = 'query($id: UUID!) { campaign(id: $id) { history(first: 50) { edges { node { action } } } } }';

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
    await callAnyTime(page);
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

    /** Presses Tab (or another key) until the focused element is the one named; answers its outline, which must show. */
    async function tabTo(name: string, key = 'Tab') {
      for (let i = 0; i < 80; i += 1) {
        await page.keyboard.press(key);
        const focused = await page.evaluate(() => {
          const el = document.activeElement as HTMLInputElement;
          const name = el.innerText?.trim() || el.getAttribute('aria-label') || el.labels?.[0]?.innerText.trim();
          return { name, outline: getComputedStyle(el).outlineStyle };
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

    // The new-campaign form's A/B split: turned on, filled and extended from the keyboard.
    expect(await tabTo('New campaign')).toBe('solid');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'New campaign', level: 1 }).waitFor();
    expect(await tabTo(SPLIT_LABEL)).toBe('solid');
    await page.keyboard.press('Space');
    expect(await tabTo('Variant 1 name')).toBe('solid');
    await page.keyboard.type('Control');
    expect(await tabTo('Variant 2 weight (1 to 100)')).toBe('solid');
    expect(await tabTo('Add a variant')).toBe('solid');
    await page.keyboard.press('Enter');
    await page.getByLabel('Variant 3 name').waitFor();
    expect(await tabTo('Remove variant 3', 'Shift+Tab')).toBe('solid');
    await page.keyboard.press('Enter');
    await page.getByLabel('Variant 3 name').waitFor({ state: 'detached' });
    expect(await page.getByLabel('Variant 1 name').inputValue()).toBe('Control');
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
    // The new-campaign form with its A/B split on.
    await page.goto(`${app.url}/console/#/campaigns/new`);
    await page.getByLabel(SPLIT_LABEL).check();
    await page.getByRole('button', { name: 'Add a variant' }).click();
    await page.getByLabel('Variant 3 name').waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth), 'A/B split').toBeLessThanOrEqual(320);
    await page.goto(`${app.url}/console/${campaignPath}`);
    await page.getByRole('heading', { name: 'Report' }).waitFor();
    await screenshot(page, 'campaign-320px');
    await page.close();
  }, 120_000);

  it('pauses, resumes and cancels a running campaign, shows each step and an edit in its history as they happen, and clones it', async () => {
    const page = await browser.newPage();
    await logIn(page, who.token);
    await page.getByRole('link', { name: 'New campaign' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Night shift');
    await callAnyTime(page);
    // It calls on the day after tomorrow only: running, it waits for its day whatever the hour of the test.
    const day = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][(new Date().getUTCDay() + 2) % 7]!;
    for (const label of ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'])
      await page.getByLabel(label, { exact: true }).setChecked(label === day);
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.getByRole('heading', { name: 'Night shift', level: 1 }).waitFor();
    const id = page.url().split('/').at(-1)!;
    const status = page.getByTestId('campaign-status');
    const stored = () => app.prisma.campaign.findUniqueOrThrow({ where: { id } });
    await markPage(page);

    // An edit made elsewhere (here through the API) joins the page's history as it is written.
    expect((await app.gql(UPDATE_CAMPAIGN, { id, input: { concurrentCalls: 5 } }, who.token)).errors).toBeUndefined();
    await page.locator('ol.history > li').filter({ hasText: 'concurrentCalls: 3 → 5' }).waitFor({ timeout: 30_000 });
    await page.getByText(/, 5 at once, /).waitFor();

    await page.getByRole('button', { name: 'Dispatch' }).click();
    await page
      .getByRole('status')
      .getByText(/^The campaign is running\. Calling begins at /)
      .waitFor();
    await expect.poll(() => status.innerText()).toBe('running');
    expect(await stored()).toMatchObject({ status: 'running', pausedReason: null });

    await page.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => status.innerText()).toBe('paused (user requested)');
    expect(await stored()).toMatchObject({ status: 'paused', pausedReason: 'user_requested' });

    await page.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => status.innerText()).toBe('running');
    expect(await stored()).toMatchObject({ status: 'running', pausedReason: null });

    // Cancelling asks first.
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => status.innerText()).toBe('cancelled');
    expect((await stored()).status).toBe('cancelled');
    await expect.poll(() => page.getByRole('button', { name: /^(Dispatch|Pause|Resume|Cancel)$/ }).count()).toBe(0);

    // The page's history is the API's, newest first: every step above.
    const history = await app.gql(HISTORY, { id }, who.token);
    const actions = history.data.campaign.history.edges.map((e: { node: { action: string } }) => e.node.action);
    expect(actions).toEqual(['cancelled', 'resumed', 'paused', 'dispatched', 'edited', 'created']);
    await expect.poll(() => page.locator('ol.history > li > strong').allInnerTexts(), { timeout: 30_000 }).toEqual(actions);
    expect(await stillMarked(page)).toBe(true);
    await screenshot(page, 'campaign-history');

    // A clone is a draft with the same settings, on a page of its own.
    await page.getByRole('button', { name: 'Clone' }).click();
    await page.getByRole('heading', { name: 'Night shift (copy)', level: 1 }).waitFor();
    const cloneId = page.url().split('/').at(-1)!;
    expect(cloneId).not.toBe(id);
    expect(await status.innerText()).toBe('draft');
    const source = await stored();
    expect(await app.prisma.campaign.findUniqueOrThrow({ where: { id: cloneId } })).toMatchObject({
      name: 'Night shift (copy)',
      status: 'draft',
      concurrentCalls: 5,
      agentId: source.agentId,
      contactGroupId: source.contactGroupId,
      activeDays: source.activeDays,
    });
    await page.getByRole('button', { name: 'Dispatch' }).waitFor();
    await page.close();
  }, 240_000);

  it('redials the contacts Spring recall called and did not reach, the ones its preview counts', async () => {
    const page = await browser.newPage();
    await logIn(page, who.token);
    await page.goto(campaignUrl);
    await page.getByRole('heading', { name: 'Spring recall', level: 1 }).waitFor();
    const sourceId = campaignUrl.split('/').at(-1)!;
    // Called and not reached: waiting for a retry, or done without reaching (not a number out of service, nor a refusal).
    const missed = await app.prisma.campaignContact.findMany({
      where: {
        campaignId: sourceId,
        attempts: { gt: 0 },
        OR: [{ state: { not: 'done' } }, { outcome: { in: ['not_reached', 'cancelled'] } }],
      },
    });
    expect(missed.length).toBeGreaterThan(0);

    await page.getByRole('button', { name: 'Redial' }).click();
    await page.getByRole('heading', { name: 'Spring recall (redial)', level: 1 }).waitFor();
    const redialId = page.url().split('/').at(-1)!;
    await page.getByText('Redials Spring recall: the contacts it called and did not reach.').waitFor();
    expect(await page.getByTestId('campaign-status').innerText()).toBe('draft');
    await expect.poll(() => page.locator('[data-preview="contacts"]').innerText(), { timeout: 30_000 }).toBe(String(missed.length));
    expect(await app.prisma.campaign.findUniqueOrThrow({ where: { id: redialId } })).toMatchObject({ redialOf: sourceId, status: 'draft' });

    await page.getByRole('button', { name: 'Dispatch' }).click();
    await page
      .getByRole('status')
      .getByText(/^The campaign is running/)
      .waitFor();
    const enrolled = async () =>
      (await app.prisma.campaignContact.findMany({ where: { campaignId: redialId } })).map((c) => c.contactId).sort();
    await expect.poll(enrolled, { timeout: 30_000 }).toEqual(missed.map((c) => c.contactId).sort());
    await page.close();
  }, 240_000);

  it('splits a campaign between two agents, previews whom it calls and whom a rule blocks, and shows the split’s significance', async () => {
    await createAgent(app, who.token, { name: 'Evening desk' });
    const rows = [
      { Name: 'Ida Rhodes', Phone: '+14158880111' },
      { Name: 'Mary Keller', Phone: '+14158880112' },
      { Name: 'Jean Bartik', Phone: '+14158880113' },
      { Name: 'Betty Holberton', Phone: '+14158880114' },
      { Name: 'Kay McNulty', Phone: '+14158880115' },
      { Name: 'Ruth Teitelbaum', Phone: '+14158880116' },
    ];
    await importGroup(app, who.token, rows, 'autumn-leads');
    // On the do-not-call list after the import: the contact is in the group, and the rule blocks each call to it.
    const listed = await app.gql(
      'mutation($p: String!) { addDoNotCall(input: { phoneNumber: $p }) { phoneNumber } }',
      { p: '+14158880112' },
      who.token,
    );
    expect(listed.errors).toBeUndefined();

    const page = await browser.newPage();
    await logIn(page, who.token);
    await page.getByRole('link', { name: 'New campaign' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Autumn split');
    await page.getByLabel('Contact group').selectOption({ label: 'autumn-leads (6)' });
    await callAnyTime(page);
    await page.getByLabel(SPLIT_LABEL).check();
    await page.getByLabel('Variant 1 name').fill('Control');
    await page.getByLabel('Variant 1 agent').selectOption({ label: 'Front desk' });
    await page.getByLabel('Variant 1 weight (1 to 100)').fill('70');
    await page.getByLabel('Variant 2 name').fill('Challenger');
    await page.getByLabel('Variant 2 agent').selectOption({ label: 'Evening desk' });
    await page.getByLabel('Variant 2 weight (1 to 100)').fill('30');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.getByRole('heading', { name: 'Autumn split', level: 1 }).waitFor();
    const id = page.url().split('/').at(-1)!;
    const variants = await app.prisma.campaignVariant.findMany({
      where: { campaignId: id },
      orderBy: { position: 'asc' },
      include: { agent: true },
    });
    expect(variants.map((v) => [v.name, v.agent.name, v.weight])).toEqual([
      ['Control', 'Front desk', 70],
      ['Challenger', 'Evening desk', 30],
    ]);
    expect((await tableRows(page, 'A/B variants')).map((row) => row.slice(0, 3))).toEqual([
      ['Control', 'Front desk', '70 (70.0 %)'],
      ['Challenger', 'Evening desk', '30 (30.0 %)'],
    ]);

    // The dispatch preview: six contacts, five to call, one held back by the do-not-call rule.
    await expect.poll(() => page.locator('[data-preview="contacts"]').innerText(), { timeout: 30_000 }).toBe('6');
    expect(await page.locator('[data-preview="to-call"]').innerText()).toBe('5');
    expect(await chartTable(page, 'blocked-by-rule')).toEqual([['do not call', '1']]);

    await page.getByRole('button', { name: 'Dispatch' }).click();
    await page
      .getByTestId('live-count')
      .getByText(/^5 calls so far/)
      .waitFor({ timeout: 60_000 });
    // The contact the rule stopped, by rule, once the dialer met it.
    await expect
      .poll(async () => (await tableRows(page, 'Blocked contacts')).map((row) => row.slice(0, 2)), { timeout: 60_000 })
      .toEqual([['Mary Keller', 'do not call']]);

    // The split's figures and its test are the report's, once all five calls are counted there.
    const REPORT = `query($id: UUID!) { campaign(id: $id) { report { metrics {
      outcomes { human voicemail noAnswer busy failed ivr callScreening invalidNumber }
      variants { name contacts attempted reached } variantComparison { significant statement } } } } }`;
    const report = async () => (await app.gql(REPORT, { id }, who.token)).data.campaign.report.metrics;
    // A call counts by its outcome once its result is written: read the split once all five are.
    const outcomesCounted = async () => Object.values((await report()).outcomes as Record<string, number>).reduce((sum, n) => sum + n, 0);
    await expect.poll(outcomesCounted, { timeout: 60_000 }).toBe(5);
    const { variants: split, variantComparison } = await report();
    expect(split.reduce((sum: number, v: { attempted: number }) => sum + v.attempted, 0)).toBe(5);
    type Figures = { name: string; contacts: number; attempted: number; reached: number };
    const expected = ['Control', 'Challenger'].map((name) => {
      const figures = (split as Figures[]).find((v) => v.name === name);
      return [name, `${figures?.contacts ?? 0}`, `${figures?.attempted ?? 0}`, `${figures?.reached ?? 0}`];
    });
    await expect
      .poll(async () => (await tableRows(page, 'A/B variants')).map((row) => [row[0], row[3], row[4], row[5]]), { timeout: 30_000 })
      .toEqual(expected);
    const significance = await page.getByTestId('ab-significance').innerText();
    expect(significance.startsWith(variantComparison.significant ? 'Significant' : 'Not significant')).toBe(true);
    expect(significance).toContain(variantComparison.statement);
    await screenshot(page, 'campaign-ab');

    // The list shows the campaign's progress as the API counts it: done, waiting, and the one blocked.
    const PROGRESS = 'query($id: UUID!) { campaign(id: $id) { progress { total done pending dialing doNotCall consentMissing invalid } } }';
    await page.getByRole('navigation').getByRole('link', { name: 'Campaigns' }).click();
    const card = page.getByRole('listitem').filter({ has: page.getByRole('link', { name: 'Autumn split' }) });
    const counts = async () => ({
      done: await card.locator('[data-count="done"]').innerText(),
      waiting: await card.locator('[data-count="waiting"]').innerText(),
      blocked: await card.locator('[data-count="blocked"]').innerText(),
    });
    const counted = async () => {
      const p = (await app.gql(PROGRESS, { id }, who.token)).data.campaign.progress;
      return {
        done: `${p.done} / ${p.total}`,
        waiting: `${p.pending + p.dialing}`,
        blocked: `${p.doNotCall + p.consentMissing + p.invalid}`,
      };
    };
    // Every call has ended: the counts stand still.
    const progress = await counted();
    await expect.poll(counts, { timeout: 30_000 }).toEqual(progress);
    expect((await counts()).blocked).toBe('1');
    await page.close();
  }, 240_000);

  it('logs in with an API key, kept in the tab’s session only', async () => {
    const key = await app.gql('mutation { createApiKey(input: { name: "Console", scope: full }) { secret } }', {}, who.token);
    expect(key.errors).toBeUndefined();
    const page = await browser.newPage();
    await logIn(page, key.data.createApiKey.secret);
    await page.getByRole('link', { name: 'Spring recall', exact: true }).waitFor();
    expect(await page.evaluate(() => [sessionStorage.length, localStorage.length])).toEqual([1, 0]);
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('Token or API key').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.close();
  }, 60_000);

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

  it('buys credits: the billing page opens Stripe Checkout for the amount, says how it ended, and lists the top-ups with their receipts', async () => {
    const stripe = await new FakeStripe('sk_test_console').start();
    const checkout = {
      apiKey: 'sk_test_console',
      apiBaseUrl: stripe.url,
      successUrl: 'http://console.test/console/?checkout=success&session_id={CHECKOUT_SESSION_ID}#/billing',
      cancelUrl: 'http://console.test/console/?checkout=cancelled#/billing',
    };
    const webhookSecret = 'whsec_test_console_0123456789abcdef';
    const shop = await startTestApp({ console: true, settings: { checkout }, stripeWebhookSecret: webhookSecret });
    /** Stripe's signed event, delivered to the app's webhook as Stripe delivers it. */
    const deliver = (type: string, object: unknown) => {
      const payload = JSON.stringify({
        id: `evt_test_${randomUUID().replaceAll('-', '')}`,
        object: 'event',
        type,
        created: Math.floor(Date.now() / 1000),
        data: { object },
      });
      const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret });
      return shop.request('POST', '/webhooks/stripe', {
        raw: payload,
        headers: { 'content-type': 'application/json', 'stripe-signature': signature },
      });
    };
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

      // Paid: the payer is back before Stripe's event, and the page shows the credits once it has come, without a reload.
      await page.goto(`${shop.url}/console/?checkout=success&session_id=${session!.id}#/billing`);
      await page.getByText('Payment received').waitFor();
      await markPage(page);
      expect((await deliver('checkout.session.completed', stripe.completed(session!.id))).json).toEqual({
        received: true,
        result: 'applied',
      });
      await expect.poll(() => page.getByTestId('balance').innerText(), { timeout: 30_000 }).toBe('$25.00');
      expect(await stillMarked(page)).toBe(true);
      const [topUp] = await tableRows(page, 'Transactions');
      expect(topUp!.slice(1)).toEqual(['top up', '$25.00', '$25.00', 'Credit top-up (Stripe Checkout)', '—']);

      // A top-up paid by invoice carries the invoice's link: its receipt.
      const invoiceUrl = 'https://invoice.stripe.com/i/acct_test/in_test_console';
      const invoice = {
        id: 'in_test_console',
        object: 'invoice',
        amount_due: 100_000,
        amount_paid: 100_000,
        amount_remaining: 0,
        currency: 'usd',
        customer: 'cus_test_console',
        hosted_invoice_url: invoiceUrl,
        metadata: { user_id: id },
        number: 'CF-0001',
        status: 'paid',
      };
      expect((await deliver('invoice.paid', invoice)).json).toEqual({ received: true, result: 'applied' });
      await page.goto(`${shop.url}/console/#/billing`);
      await expect.poll(() => page.getByTestId('balance').innerText()).toBe('$1,025.00');
      const rows = await tableRows(page, 'Transactions');
      expect(rows.map((row) => row.slice(1))).toEqual([
        ['top up', '$1,000.00', '$1,025.00', 'Credit top-up (Stripe invoice CF-0001)', 'Receipt'],
        ['top up', '$25.00', '$25.00', 'Credit top-up (Stripe Checkout)', '—'],
      ]);
      const receipt = page.getByRole('table', { name: 'Transactions' }).getByRole('link', { name: 'Receipt' });
      expect(await receipt.getAttribute('href')).toBe(invoiceUrl);
      expect(await shop.prisma.creditTransaction.count({ where: { userId: id } })).toBe(2);
      await screenshot(page, 'billing');
    } finally {
      await page.close();
      await shop.close();
      await stripe.close();
    }
  }, 120_000);
});

// An app whose agents' provisioning and whose calls the test runs itself, step by step: the page must
// follow what happens after it was drawn.
describe.skipIf(browserMissing)('the console, while provisioning and calls happen', () => {
  let on: TestApp;
  let user: Awaited<ReturnType<typeof customer>>;
  const queued: string[] = [];
  beforeAll(async () => {
    held = await startTestApp({ console: true, voice: { queued: async (agentId) => void queued.push(agentId) } });
    on = held;
    user = await customer(on);
  });

  /** A provider that refuses the agent for good, as a real one refuses a voice it does not have. */
  const refusing: VoiceProvider = {
    name: 'refusing',
    provision: async () => {
      throw new ProviderError('The voice "robot-9" does not exist.', false);
    },
    remove: async () => {},
    inspect: async () => ({ present: true, modifiedAt: 0 }),
  };

  async function newAgent(page: Page, name: string, phone: string) {
    await page.getByRole('navigation').getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('link', { name: 'Create an agent from Appointment Setter' }).click();
    await page.getByLabel('Agent’s name in the console').fill(name);
    await page.getByLabel('Phone number it calls from').fill(phone);
    await page.getByLabel('Agent name (required)').fill('Sam');
    await page.getByLabel('Company name (required)').fill('Acme Dental');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
    return on.prisma.agent.findFirstOrThrow({ where: { userId: user.id, name } });
  }

  it('shows an agent’s provisioning as it goes, from pending to ready, or failed and retried, without a reload', async () => {
    const page = await browser.newPage();
    await logIn(page, user.token, on);
    const env = dialerEnv(on, systemClock);
    const provisioning = (name: string) => page.locator('tr', { hasText: name }).getByTestId('provisioning');

    const front = await newAgent(page, 'Front desk', '+14158889101');
    expect(queued).toContain(front.id);
    await expect.poll(() => provisioning('Front desk').innerText()).toBe('pending');
    await markPage(page);
    await provisionAgent(env, new SimulatedVoiceProvider(), front.id, true);
    const ready = await on.prisma.agent.findUniqueOrThrow({ where: { id: front.id } });
    await expect.poll(() => provisioning('Front desk').innerText(), { timeout: 30_000 }).toBe(`ready (version ${ready.version})`);

    const night = await newAgent(page, 'Night desk', '+14158889102');
    await expect.poll(() => provisioning('Night desk').innerText()).toBe('pending');
    await provisionAgent(env, refusing, night.id, true);
    await expect
      .poll(() => provisioning('Night desk').innerText(), { timeout: 30_000 })
      .toBe('failed: The voice "robot-9" does not exist. Retry');
    await screenshot(page, 'agents');
    await page.getByRole('button', { name: 'Retry provisioning Night desk' }).click();
    await expect.poll(() => provisioning('Night desk').innerText()).toBe('pending');
    expect(queued.filter((id) => id === night.id)).toHaveLength(2);
    await provisionAgent(env, new SimulatedVoiceProvider(), night.id, true);
    await expect.poll(() => provisioning('Night desk').innerText(), { timeout: 30_000 }).toMatch(/^ready \(version \d+\)$/);
    await page.getByRole('navigation').getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('navigation').getByRole('link', { name: 'Agents' }).click();
    expect(await stillMarked(page)).toBe(true);
    await page.close();
  }, 120_000);

  it('shows a contact’s call with its summary, transcript, recording link and the appointment it booked, at 320 px too', async () => {
    const agent = await on.prisma.agent.findFirstOrThrow({ where: { userId: user.id, name: 'Front desk' } });
    const groupId = await importGroup(
      on,
      user.token,
      [
        { Name: 'Ada Lovelace', Phone: '+14158880201' },
        { Name: 'Alan Turing', Phone: '+14158880202' },
      ],
      'Check-up list',
    );
    const created = await on.gql(
      'mutation($input: CreateCampaignInput!) { createCampaign(input: $input) { id } }',
      {
        input: {
          name: 'Check-ups',
          agentId: agent.id,
          contactGroupId: groupId,
          timezone: 'UTC',
          callingHours: { start: '00:00', end: '24:00' },
          activeDays: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
          regionalRules: false,
          scheduleConfig: { maxAttempts: 1 },
        },
      },
      user.token,
    );
    const campaign = created.data.createCampaign;
    expect((await dispatch(on, user.token, campaign.id)).status).toBe(202);

    // The calls end as the provider reports them: Ada talks, books and is recorded; Alan does not answer.
    const scheduledAt = new Date(Date.now() + 3 * 86_400_000);
    scheduledAt.setUTCHours(15, 0, 0, 0);
    const transcript =
      'Agent: Hello Ada, this is Sam from Acme Dental.\nAda: Hello! Is Thursday afternoon free?\nAgent: It is: booked for 15:00.';
    const recordingUrl = 'https://recordings.example.com/ada-check-up.wav';
    const calls = recordingDialer(dialerEnv(on, systemClock), (call) =>
      call.to === '+14158880201'
        ? {
            outcome: 'human',
            durationSeconds: 95,
            sentiment: 'positive',
            summary: 'Booked a check-up for Thursday afternoon.',
            transcript,
            recordingUrl,
            appointment: { scheduledAt, notes: 'Prefers afternoons.' },
          }
        : { outcome: 'no_answer', durationSeconds: 0 },
    );
    await calls.run(campaign.id);
    const ada = await on.prisma.contact.findFirstOrThrow({ where: { groupId, phoneNumber: '+14158880201' } });
    const appointment = await on.prisma.appointment.findFirstOrThrow({ where: { contactId: ada.id } });

    const page = await browser.newPage();
    await logIn(page, user.token, on);
    await page.goto(`${on.url}/console/#/contacts/${ada.id}`);
    await page.getByRole('heading', { name: 'Attempt 1, Check-ups' }).waitFor();
    const call = page.locator('ol.attempts > li').first();
    await call.getByText('Booked a check-up for Thursday afternoon.').waitFor();
    expect(await call.getByRole('link', { name: 'Recording' }).getAttribute('href')).toBe(recordingUrl);
    const booked = await page.evaluate(
      (at) => new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(at)),
      scheduledAt.toISOString(),
    );
    await call.getByText(`Appointment ${appointment.status.replace(/_/g, ' ')}: ${booked}`).waitFor();
    expect(appointment.scheduledAt).toEqual(scheduledAt);
    // The transcript opens from the keyboard.
    await call.getByText('Transcript', { exact: true }).focus();
    await page.keyboard.press('Enter');
    expect(await call.locator('pre.transcript').innerText()).toBe(transcript);
    await screenshot(page, 'contact');

    await page.setViewportSize({ width: 320, height: 640 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(320);
    await page.close();
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
