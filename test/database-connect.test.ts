import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestApp, TEST_SECRET, type TestApp } from './support/app.js';
import { startProxy } from './support/tcp-proxy.js';
import { databaseUrlOf, stopServer } from './support/workers.js';

// A DATABASE_URL the service cannot use stops `npm start` and `npm run worker` with one line naming the
// database (without its password) and the cause, as a bad setting does; a server still starting is
// waited for, with a bounded, logged retry.

const root = new URL('..', import.meta.url).pathname;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs an entry point on `databaseUrl` until it exits. `watch` sees its stdout as it grows, and may stop
 * it (SIGTERM) once it has seen enough.
 */
function runEntry(
  entry: string,
  databaseUrl: string,
  env: Record<string, string> = {},
  watch: (stdout: string, stop: () => void) => void = () => {},
): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: databaseUrl,
      JWT_SECRET: TEST_SECRET,
      SEED_DEMO: 'false',
      HOST: '127.0.0.1',
      PORT: '0',
      WORKER_PORT: '0',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run: Run = { code: null, stdout: '', stderr: '' };
  return new Promise((resolve) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      run.stdout += chunk.toString();
      watch(run.stdout, () => void stopServer(child));
    });
    child.stderr!.on('data', (chunk: Buffer) => (run.stderr += chunk.toString()));
    child.once('exit', (code) => resolve({ ...run, code }));
  });
}

/** A loopback port nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** One line on stderr, no stack trace, and the password nowhere. */
function expectOneLine(run: Run, line: RegExp) {
  expect(run.code).toBe(1);
  expect(run.stderr.trim()).toMatch(line);
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(`${run.stdout}${run.stderr}`).not.toContain('hunter2');
}

describe('a DATABASE_URL nothing answers at', () => {
  it('is retried with a logged backoff, then one line: the URL without its password, and the cause', async () => {
    const port = await closedPort();
    for (const entry of ['src/main.ts', 'src/worker.ts']) {
      // Every step's progress line printed, as a slow start prints them: stderr still holds one line.
      const run = await runEntry(entry, `postgresql://callflow:hunter2@127.0.0.1:${port}/callflow?password=hunter2`, {
        DATABASE_CONNECT_TIMEOUT_SECONDS: '1',
        STARTUP_PROGRESS_AFTER_MS: '0',
      });
      expectOneLine(
        run,
        new RegExp(
          `^Cannot connect to the database at postgresql://callflow@127\\.0\\.0\\.1:${port}/callflow: connection refused, ` +
            'nothing accepts connections at that address \\(ECONNREFUSED\\), still after 1 s of retries \\(DATABASE_CONNECT_TIMEOUT_SECONDS\\)\\.$',
        ),
      );
      // The log's lines, among the start's progress lines for people (printed when a step takes over a second).
      const retries = run.stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg: string; attempt: number; database: string });
      expect(retries.length, entry).toBeGreaterThanOrEqual(1);
      expect(retries[0]).toMatchObject({
        msg: 'database not accepting connections yet; retrying',
        attempt: 1,
        database: `postgresql://callflow@127.0.0.1:${port}/callflow`,
      });
    }
  }, 120_000);

  it('stops at once on a host name that does not resolve', async () => {
    const run = await runEntry('src/main.ts', 'postgresql://callflow:hunter2@no-such-host.invalid:5432/callflow');
    expectOneLine(
      run,
      /^Cannot connect to the database at postgresql:\/\/callflow@no-such-host\.invalid:5432\/callflow: host name not found \(ENOTFOUND\)\.$/,
    );
    expect(run.stdout).not.toContain('retrying');
  }, 60_000);
});

describe.runIf(inject('testDatabase').kind === 'postgres')('a PostgreSQL server that refuses the session', () => {
  const server = () => new URL((inject('testDatabase') as { serverUrl: string }).serverUrl);

  it('stops at once on an unknown database, naming it', async () => {
    const url = server();
    const name = `callflow_missing_${randomUUID().slice(0, 8)}`;
    url.pathname = `/${name}`;
    url.password = 'hunter2';
    const run = await runEntry('src/main.ts', url.toString());
    url.password = '';
    expectOneLine(
      run,
      new RegExp(`^Cannot connect to the database at ${escape(url.toString())}: database "${name}" does not exist \\(3D000\\)\\.$`),
    );
    expect(run.stdout).not.toContain('retrying');
  }, 60_000);

  it('stops at once on an unknown role, naming it', async () => {
    const url = server();
    const role = `nobody_${randomUUID().slice(0, 8)}`;
    url.username = role;
    url.password = 'hunter2';
    const run = await runEntry('src/main.ts', url.toString());
    // Depending on the server's pg_hba.conf: no such role (28000), or a password refused (28P01).
    expectOneLine(
      run,
      new RegExp(`^Cannot connect to the database at .+: (role|password authentication failed for user) "${role}".* \\(28(000|P01)\\)\\.$`),
    );
  }, 60_000);
});

describe.runIf(inject('testDatabase').kind === 'postgres')('a PostgreSQL server that starts after the service', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('is waited for: the start logs its retries and serves once the server accepts connections', async () => {
    const port = await closedPort();
    const url = new URL(await databaseUrlOf(app));
    const target = { host: url.hostname, port: Number(url.port || 5432) };
    url.host = `127.0.0.1:${port}`;
    // The server "starts" once the service has found it closed, and 2 s later: nothing listens until then.
    let proxy: Promise<Awaited<ReturnType<typeof startProxy>>> | undefined;
    const run = await runEntry('src/main.ts', url.toString(), { DATABASE_CONNECT_TIMEOUT_SECONDS: '60', DIALER: 'off' }, (stdout, stop) => {
      if (!proxy && stdout.includes('database not accepting connections yet; retrying')) {
        proxy = new Promise((resolve) => setTimeout(resolve, 2_000)).then(() => startProxy(target, port));
      }
      if (/GraphQL:\s+http/.test(stdout)) stop();
    });
    await (await proxy)?.stop();
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/GraphQL:\s+http/);
    const retries = run.stdout.split('\n').filter((line) => line.includes('database not accepting connections yet; retrying'));
    expect(retries.length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(retries[0]!)).toMatchObject({ attempt: 1, cause: expect.stringContaining('ECONNREFUSED') });
  }, 120_000);
});

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
