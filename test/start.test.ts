import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;

// `npm start` exactly as a newcomer runs it: no configuration, an empty data folder, the embedded
// database. It must serve v1 with the token it prints, and GraphiQL, with no network.

interface Started {
  child: ChildProcess;
  url: string;
  token: string;
}

function start(dataDir: string): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
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

  it('has demo data: an active agent with a number and a campaign', async () => {
    const res = await fetch(`${first.url}/api/v1/agents/active/`, { headers: { authorization: `Bearer ${first.token}` } });
    const agents = (await res.json()) as any[];
    expect(agents).toHaveLength(1);
    expect(agents[0].phone_numbers).toHaveLength(1);
    expect(agents[0].campaigns).toEqual([expect.objectContaining({ status: 'draft' })]);
  });

  it('serves GraphiQL with no external assets', async () => {
    const res = await fetch(`${first.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('GraphiQL');
    expect(html).not.toMatch(/<(script|link)[^>]+(src|href)="(https?:)?\/\//);
  });

  it('refuses a second process on the same data folder while the first runs', async () => {
    const second = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
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
      const res = await fetch(`${second.url}/api/v1/agents/active/`, { headers: { authorization: `Bearer ${first.token}` } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as unknown[]).length).toBe(1);
    } finally {
      expect(await stop(second.child)).toBe(0);
    }
  }, 120_000);
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
