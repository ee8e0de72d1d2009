import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoTemplatePath } from '../src/db/embedded-template.js';
import { REDATE_MARKER } from '../src/demo/redate.js';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;

// `npm start` exactly as a newcomer runs it: no configuration, an empty data folder, the embedded
// database. It must serve v1 with the token it prints, demo data every endpoint answers, and GraphiQL,
// with no network.

const NPM_START = ['scripts/run.mjs', 'main'];

interface Started {
  child: ChildProcess;
  url: string;
  token: string;
}

function start(dataDir: string): Promise<Started> {
  const child = spawn(process.execPath, NPM_START, {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 90 s:\n${output}`)), 90_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const url = output.match(/REST v1:\s+(http:\/\/\S+)\/api\/v1\//)?.[1];
      const token = output.match(/Demo token[^\n]*\n\s+(\S+)/)?.[1];
      if (url && token) {
        clearTimeout(timer);
        resolve({ child, url, token });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited with ${code}:\n${output}`)));
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

describe('npm start on a fresh checkout', () => {
  let dataDir: string;
  let first: Started;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'callflow-start-'));
    first = await start(join(dataDir, 'data'));
  }, 120_000);
  afterAll(async () => {
    if (first.child.exitCode === null) await stop(first.child);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('serves the agent templates with the printed demo token', async () => {
    const res = await fetch(`${first.url}/api/v1/agents/templates/`, { headers: { authorization: `Bearer ${first.token}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as unknown[]).length).toBe(5);
  });

  // The demo was seeded by `npm install` into a template, which a first start copies and moves to the
  // present (src/demo/redate.ts): its finished campaign ran a day before this start.
  it('copies the demo seeded at install and moves it to the present', async () => {
    expect(await readdir(demoTemplatePath)).toContain(REDATE_MARKER);
    expect(await readdir(join(dataDir, 'data', 'pgdata'))).not.toContain(REDATE_MARKER);
    const res = await fetch(`${first.url}/api/v1/campaigns/`, { headers: { authorization: `Bearer ${first.token}` } });
    const called = ((await res.json()) as { status: string; started_at: string }[]).find((c) => c.status === 'completed')!;
    expect(Math.abs(Date.parse(called.started_at) - (Date.now() - 24 * 3600_000))).toBeLessThan(3600_000);
  });

  it('has demo data on which every one of the 20 v1 endpoints answers', async () => {
    const v1 = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${first.url}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${first.token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, json: res.status === 204 ? null : ((await res.json()) as any) };
    };
    const templates = await v1('GET', '/agents/templates/');
    expect(templates).toMatchObject({ status: 200, json: { length: 5 } });
    expect((await v1('GET', `/agents/templates/${templates.json[0].id}/`)).status).toBe(200);
    const agents = await v1('GET', '/agents/active/');
    expect(agents.json).toHaveLength(1);
    expect(agents.json[0].phone_numbers).toHaveLength(1);
    const campaigns = (await v1('GET', '/campaigns/')).json as any[];
    const called = campaigns.find((c) => c.status === 'completed');
    const draft = campaigns.find((c) => c.status === 'draft');
    expect(called && draft).toBeTruthy();
    expect((await v1('GET', `/campaigns/${called.id}/`)).json.name).toBe(called.name);

    // Yesterday's campaign: named people, its calls, a report with an appointment booked.
    const report = await v1('GET', `/campaigns/${called.id}/report/`);
    expect(report.status).toBe(200);
    expect(report.json.metrics).toMatchObject({ appointmentsBooked: 1, contacts: { total: 7, attempted: 6, reached: 2 } });
    expect(report.json.metrics.outcomes).toMatchObject({ human: 3, voicemail: 1, noAnswer: 1, busy: 1 });
    const history = await v1('GET', '/campaigns/recordings/');
    expect(history.json).toHaveLength(6);
    expect(history.json.every((call: any) => call.contactName.length > 0)).toBe(true);
    const ada = history.json.find((call: any) => call.contactName === 'Ada Lovelace');
    expect((await v1('GET', `/campaigns/contact-attempts/${ada.id}/`)).json).toMatchObject({ contactName: 'Ada Lovelace' });
    expect((await v1('GET', `/contacts/contacts/${ada.contactId}/`)).json).toMatchObject({ status: 'active' });
    const appointments = await v1('GET', '/appointments/');
    expect(appointments.json).toEqual([expect.objectContaining({ contact_id: ada.contactId, campaign_id: called.id })]);

    // Money: the calls were charged, and the top-up has a receipt.
    expect((await v1('GET', '/billing/credits/')).status).toBe(200);
    const transactions = (await v1('GET', '/billing/transactions/')).json.transactions as any[];
    expect(transactions.filter((t) => t.kind === 'call_charge').length).toBeGreaterThan(0);
    const topUp = transactions.find((t) => t.kind === 'top_up');
    expect(await v1('GET', `/billing/transactions/${topUp.id}/receipt/`)).toMatchObject({ status: 200, json: { url: expect.any(String) } });

    // The draft dispatches at once (the demo calls at any hour) and says so.
    const dispatched = await v1('POST', `/campaigns/${draft.id}/dispatch/`, {});
    expect(dispatched).toMatchObject({ status: 202, json: { status: 'running', detail: 'The campaign is running.' } });

    // Writes: a new campaign, an import, a group changed and deleted, a contact deleted, the agent archived.
    const imported = await v1('POST', '/contacts/import/', {
      groupName: 'More leads',
      csvData: [{ Name: 'Ida Rhodes', Phone: '+14155550123' }],
    });
    expect(imported).toMatchObject({ status: 201, json: { totalImported: 1 } });
    const created = await v1('POST', '/contacts/contacts/', {
      name: 'Next',
      agent_id: agents.json[0].id,
      contact_group_id: imported.json.groupId,
    });
    expect(created.status).toBe(201);
    expect(
      (await v1('PATCH', `/contacts/groups/${imported.json.groupId}/`, { phone_number: '+14155550124', data: { source: 'demo' } })).status,
    ).toBe(200);
    expect((await v1('DELETE', `/contacts/groups/${imported.json.groupId}/`)).status).toBe(204);
    const katherine = history.json.find((call: any) => call.contactName === 'Katherine Johnson');
    expect((await v1('DELETE', `/contacts/contacts/${katherine.contactId}/`)).status).toBe(204);
    // Deleting keeps history: the report still counts her call.
    expect((await v1('GET', `/campaigns/${called.id}/report/`)).json.metrics.contacts.attempted).toBe(6);
  });

  it('answers the API root the banner links to', async () => {
    const res = await fetch(`${first.url}/api/v1/`);
    expect(res.status).toBe(200);
    // The contract's 20, and the dispatch preview beside them.
    const endpoints = ((await res.json()) as any).endpoints;
    expect(endpoints).toHaveLength(21);
    expect(endpoints.map((e: { path: string }) => e.path)).toContain('/api/v1/campaigns/{id}/preview/');
  });

  it('serves GraphiQL with no external assets', async () => {
    const res = await fetch(`${first.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('GraphiQL');
    expect(html).not.toMatch(/<(script|link)[^>]+(src|href)="(https?:)?\/\//);
  });

  it('serves the console, which offers the demo token the banner prints', async () => {
    const page = await fetch(`${first.url}/console/`);
    expect(page.status).toBe(200);
    expect(await page.text()).not.toMatch(/<(script|link)[^>]+(src|href)="(https?:)?\/\//);
    const settings = await fetch(`${first.url}/console/config.json`);
    expect(await settings.json()).toEqual({ trustedDocuments: false, demoToken: first.token });
  });

  it('refuses a second process on the same data folder while the first runs', async () => {
    const second = spawn(process.execPath, NPM_START, {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: join(dataDir, 'data'), PORT: '0', HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    second.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => second.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toMatch(/is in use by process \d+/);
  });

  it('npm run token signs tokens the running server accepts, admin role included', async () => {
    const sub = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli/token.ts', '--sub', sub, '--role', 'admin'], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: join(dataDir, 'data') },
    });
    const token = stdout.trim();
    const res = await fetch(`${first.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'mutation { updateAgentTemplate(id: "00000000-0000-4000-8000-000000000000", input: { name: "x" }) { id } }',
      }),
    });
    // An admin gets past authorization to the lookup; a customer would be FORBIDDEN.
    expect(((await res.json()) as any).errors[0].extensions.code).toBe('NOT_FOUND');
  });

  it('restarts on the same data: the token still works and the demo is not seeded twice', async () => {
    expect(await stop(first.child)).toBe(0);
    const second = await start(join(dataDir, 'data'));
    try {
      const res = await fetch(`${second.url}/api/v1/campaigns/`, { headers: { authorization: `Bearer ${first.token}` } });
      expect(res.status).toBe(200);
      // Each demo campaign once: nothing seeded again.
      const names = ((await res.json()) as { name: string }[]).map((c) => c.name).sort();
      expect(names).toEqual(['Demo check-up calls (yesterday)', 'Demo check-up campaign']);
    } finally {
      expect(await stop(second.child)).toBe(0);
    }
  }, 120_000);
});

describe('a port another process holds', () => {
  it('stops npm start at once with one line that says what to do', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as AddressInfo;
    const dataDir = await mkdtemp(join(tmpdir(), 'callflow-port-'));
    try {
      const failed = await run(process.execPath, NPM_START, {
        cwd: root,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' },
      }).then(
        () => null,
        (error: { code: number; stderr: string; stdout: string }) => error,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stderr.trim()).toBe(
        `Port ${port} on 127.0.0.1 is already in use: stop the process using it, or start on another port (PORT=${port + 1} npm start).`,
      );
      // Refused before the database was made.
      expect(await readdir(dataDir)).toEqual([]);
    } finally {
      holder.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('a bad setting', () => {
  it('makes npm start and npm run worker print every problem and exit 1, without a stack trace', async () => {
    for (const entry of ['src/main.ts', 'src/worker.ts']) {
      const failed = await run(process.execPath, ['--import', 'tsx', entry], {
        cwd: root,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: 'eighty', LOG_LEVEL: 'loud' },
      }).then(
        () => null,
        (error: { code: number; stderr: string }) => error,
      );
      expect(failed?.code, entry).toBe(1);
      expect(failed?.stderr).toMatch(
        /^Invalid configuration:\n {2}- PORT must be a whole number.+\n {2}- LOG_LEVEL must be fatal, error, warn, info, debug, trace or silent \(got "loud"\)$/m,
      );
      expect(failed?.stderr).not.toMatch(/\n\s+at /);
    }
  }, 60_000);
});
