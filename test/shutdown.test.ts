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
 * An import whose body is sent in two halves, so that it is in flight for as long as the test wants.
 * It asks for `100 Continue` (RFC 9110, 10.1.1), which the server sends once it has read the headers:
 * `accepted` is that moment, from which on the request is one the server is serving.
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
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      expect: '100-continue',
    },
  });
  const accepted = new Promise<void>((resolve) => req.once('continue', resolve));
  // When the response ended, its keep-alive timeout as the server gave it, and when the connection closed.
  const response = new Promise<{ status: number; json: any; endedAt: number; keepAliveMs: number; closed: Promise<number> }>(
    (resolve, reject) => {
      req.on('response', (res) => {
        const closed = new Promise<number>((done) => res.socket.once('close', () => done(Date.now())));
        const keepAliveMs = Number(/timeout=(\d+)/.exec(String(res.headers['keep-alive']))?.[1]) * 1000;
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text), endedAt: Date.now(), keepAliveMs, closed }));
      });
      req.on('error', reject);
    },
  );
  req.flushHeaders();
  void accepted.then(() => req.write(body.slice(0, half)));
  return { accepted, finish: () => req.end(body.slice(half)), response };
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
    // A whole `npm start`: a new process loads the app through tsx, opens a new embedded database and
    // seeds it. A loaded machine takes minutes over what a quiet one does in seconds.
    await waitFor(() => /Demo token[^\n]*\n\s+\S+/.test(output), 240_000);
    url = output.match(/REST v1:\s+(http:\/\/\S+)\/api\/v1\//)![1]!;
    token = output.match(/Demo token[^\n]*\n\s+(\S+)/)![1]!;
  }, 300_000);
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
    await inFlight.accepted;

    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await waitFor(() => output.includes('stopped accepting connections'), 60_000);
    expect(await connectionError(url)).toBe('ECONNREFUSED');
    expect(child.exitCode).toBeNull();

    inFlight.finish();
    const response = await inFlight.response;
    expect(response.status).toBe(201);
    expect(response.json.totalImported).toBe(1);

    // The client's keep-alive connection is closed after its response rather than held to the keep-alive
    // timeout the response announced.
    expect(response.keepAliveMs).toBeGreaterThan(0);
    expect((await response.closed) - response.endedAt).toBeLessThan(response.keepAliveMs);
    expect(await exited).toBe(0);
    expect(output).toMatch(/"msg":"shut down"/);
  }, 120_000);
});

// Each test starts a whole runtime on a new embedded database: seconds on a quiet machine, far longer on a loaded one.
describe('runtime.close() with shutdown hooks', { timeout: 180_000 }, () => {
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
    await inFlight.accepted;

    const closed = runtime.close();
    await sleep(200);
    expect(await connectionError(runtime.url)).toBe('ECONNREFUSED');
    expect(contactsSeenByHook).toBeUndefined();
    inFlight.finish();
    expect((await inFlight.response).status).toBe(201);

    expect(await closed).toBe(true);
    expect(contactsSeenByHook).toBe(1);
    await expect(runtime.db.prisma.contact.count()).rejects.toThrow();
  });

  it('cuts requests off at the timeout, runs every hook however others fail, and reports it', async () => {
    const lines: { msg: string; timeoutMs?: number; hook?: string; err?: { message: string } }[] = [];
    const runtime = await startRuntime(config(1), createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) }));
    const ran: string[] = [];
    runtime.onShutdown('first', () => void ran.push('first'));
    runtime.onShutdown('hangs', () => new Promise(() => ran.push('hangs')));
    runtime.onShutdown('throws', () => {
      ran.push('throws');
      throw new Error('could not hand the work back');
    });
    const stuck = slowImport(runtime.url, await signToken(secret, { sub: '7c9e6679-7425-40de-944b-e07fc1f90ae7' }));
    stuck.response.catch(() => {});
    await stuck.accepted;

    // Neither the request nor the hang ends by itself: close() answers because the timeout cut both.
    expect(await runtime.close()).toBe(false);
    expect(ran).toEqual(['throws', 'hangs', 'first']);
    await expect(stuck.response).rejects.toThrow();
    // The configured second, for the drain and for the hook that hangs alike.
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'requests still in flight at the shutdown timeout were cut off', timeoutMs: 1_000 }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: 'shutdown hook failed',
        hook: 'hangs',
        err: expect.objectContaining({ message: 'did not finish within 1000 ms' }),
      }),
    );
  });

  it('cuts live subscriptions at once instead of waiting for them, and does not complete them', async () => {
    const runtime = await startRuntime(config(10, { SEED_DEMO: 'true' }), log);
    const campaign = await runtime.db.prisma.campaign.findFirstOrThrow({ where: { userId: DEMO_USER_ID } });
    const live = await subscribe(runtime.url, CAMPAIGN_UPDATED, { id: campaign.id }, await signToken(secret, { sub: DEMO_USER_ID }));
    await live.until((results) => results.length === 1);

    // A stream left open would hold the drain to its timeout, and close() would answer false.
    expect(await runtime.close()).toBe(true);
    await live.ended;
    expect(live.completed).toBe(false);
  });

  // The LLM client loads during the start only when an LLM is configured; the socket must be served then.
  it("serves the built-in agent's socket when an LLM is configured", async () => {
    const runtime = await startRuntime(config(10, { LLM_BASE_URL: 'http://127.0.0.1:9/v1', LLM_MODEL: 'fake-model' }), log);
    try {
      // An unknown call is refused with 404 once the agent is configured (503 says it is not).
      expect(await upgradeStatus(`${runtime.url}/voice/retell/llm/token/call_unknown`)).toBe(404);
    } finally {
      expect(await runtime.close()).toBe(true);
    }
  });
});

/** The status a WebSocket upgrade request is answered with (the brain socket refuses with an HTTP answer). */
function upgradeStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
      },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('upgrade', () => reject(new Error('the socket was opened')));
    req.on('error', reject);
    req.end();
  });
}
