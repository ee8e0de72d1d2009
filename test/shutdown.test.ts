import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { DEMO_USER_ID } from '../src/demo/seed.js';
import { createLogger } from '../src/logger.js';
import { startRuntime } from '../src/runtime.js';
import { signToken } from '../src/services/auth.js';
import { CAMPAIGN_UPDATED } from './support/live.js';
import { subscribe } from './support/sse.js';

// Graceful shutdown: on SIGTERM the server stops accepting connections, lets requests in flight finish,
// runs the shutdown hooks (the dialer hands its work back there), closes the database and exits 0.

const root = new URL('..', import.meta.url).pathname;

/**
 * An import whose body is sent in two halves, so that it is in flight for as long as the test wants:
 * the server has read the headers and waits for the rest of the body.
 */
function slowImport(url: string, token: string) {
  const body = JSON.stringify({ groupName: 'In flight', csvData: [{ Phone: '+14155550142' }] });
  const half = Math.floor(body.length / 2);
  const { hostname, port } = new URL(url);
  const req = request({
    hostname,
    port,
    method: 'POST',
    path: '/api/v1/contacts/import/',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
  });
  const response = new Promise<{ status: number; json: any }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text) }));
    });
    req.on('error', reject);
  });
  req.write(body.slice(0, half));
  return { finish: () => req.end(body.slice(half)), response };
}

const connectionError = (url: string) =>
  fetch(`${url}/healthz`).then(
    () => 'connected',
    (error) => error.cause?.code,
  );

describe('npm start on SIGTERM', () => {
  let dataDir: string;
  let child: ChildProcess;
  let output = '';
  let url: string;
  let token: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'callflow-shutdown-'));
    child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATA_DIR: join(dataDir, 'data'),
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await waitFor(() => /Demo token[^\n]*\n\s+\S+/.test(output), 90_000);
    url = output.match(/REST v1:\s+(http:\/\/\S+)\/api\/v1\//)![1]!;
    token = output.match(/Demo token[^\n]*\n\s+(\S+)/)![1]!;
  }, 120_000);
  afterAll(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  async function waitFor(condition: () => boolean, timeoutMs: number) {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${output}`);
      if (Date.now() > deadline) throw new Error(`timed out; output so far:\n${output}`);
      await sleep(50);
    }
  }

  it('finishes the request in flight, refuses new connections, and exits 0', async () => {
    const inFlight = slowImport(url, token);
    await sleep(500);

    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await waitFor(() => output.includes('stopped accepting connections'), 10_000);
    expect(await connectionError(url)).toBe('ECONNREFUSED');
    expect(child.exitCode).toBeNull();

    inFlight.finish();
    const response = await inFlight.response;
    expect(response.status).toBe(201);
    expect(response.json.totalImported).toBe(1);

    // The client's keep-alive connection is closed after its response rather than held to its timeout.
    const answered = Date.now();
    expect(await exited).toBe(0);
    expect(Date.now() - answered).toBeLessThan(3_000);
    expect(output).toMatch(/"msg":"shut down"/);
  }, 30_000);
});

describe('runtime.close() with shutdown hooks', () => {
  let dataDir: string;
  const secret = 'shutdown-test-secret-that-is-long-enough-0123456789';
  const config = (timeoutSeconds: number, more: Record<string, string> = {}) =>
    loadConfig({
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      SEED_DEMO: 'false',
      JWT_SECRET: secret,
      SHUTDOWN_TIMEOUT_SECONDS: String(timeoutSeconds),
      ...more,
    });
  const log = createLogger('silent');

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'callflow-hooks-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('runs the hooks after requests in flight finished and before the database closes', async () => {
    const runtime = await startRuntime(config(10), log);
    // The hook can still use the database, and sees what the request in flight wrote.
    let contactsSeenByHook: number | undefined;
    runtime.onShutdown('dialer', async () => {
      contactsSeenByHook = await runtime.db.prisma.contact.count();
    });
    const inFlight = slowImport(runtime.url, await signToken(secret, { sub: '7c9e6679-7425-40de-944b-e07fc1f90ae7' }));
    await sleep(300);

    const closed = runtime.close();
    await sleep(200);
    expect(await connectionError(runtime.url)).toBe('ECONNREFUSED');
    expect(contactsSeenByHook).toBeUndefined();
    inFlight.finish();
    expect((await inFlight.response).status).toBe(201);

    expect(await closed).toBe(true);
    expect(contactsSeenByHook).toBe(1);
    await expect(runtime.db.prisma.contact.count()).rejects.toThrow();
  }, 60_000);

  it('cuts requests off at the timeout, runs every hook however others fail, and reports it', async () => {
    const runtime = await startRuntime(config(1), log);
    const ran: string[] = [];
    runtime.onShutdown('first', () => void ran.push('first'));
    runtime.onShutdown('hangs', () => new Promise(() => ran.push('hangs')));
    runtime.onShutdown('throws', () => {
      ran.push('throws');
      throw new Error('could not hand the work back');
    });
    const stuck = slowImport(runtime.url, await signToken(secret, { sub: '7c9e6679-7425-40de-944b-e07fc1f90ae7' }));
    stuck.response.catch(() => {});
    await sleep(300);

    const started = Date.now();
    expect(await runtime.close()).toBe(false);
    // One second to drain, one for the hook that hangs.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(ran).toEqual(['throws', 'hangs', 'first']);
    await expect(stuck.response).rejects.toThrow();
  }, 60_000);

  it('cuts live subscriptions at once instead of waiting for them, and does not complete them', async () => {
    const runtime = await startRuntime(config(10, { SEED_DEMO: 'true' }), log);
    const campaign = await runtime.db.prisma.campaign.findFirstOrThrow({ where: { userId: DEMO_USER_ID } });
    const live = await subscribe(runtime.url, CAMPAIGN_UPDATED, { id: campaign.id }, await signToken(secret, { sub: DEMO_USER_ID }));
    await live.until((results) => results.length === 1);

    // A stream left open would hold the drain to its timeout, and close() would answer false.
    expect(await runtime.close()).toBe(true);
    await live.ended;
    expect(live.completed).toBe(false);
  }, 60_000);
});
