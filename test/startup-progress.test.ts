import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { startupProgress } from '../src/ops/startup-progress.js';
import { startTestApp } from './support/app.js';
import { databaseUrlOf } from './support/workers.js';

// A start that takes long says what it is doing: a step slower than STARTUP_PROGRESS_AFTER_MS prints one
// line, so a start on a busy machine never sits silent until its banner.

describe('startupProgress', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('prints what a step does once it has taken longer than the threshold, and nothing for a quicker one', async () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const progress = startupProgress((line) => lines.push(line), 1000);
    let finish!: () => void;
    const slow = progress('Preparing the embedded database', () => new Promise<void>((resolve) => (finish = resolve)));
    await vi.advanceTimersByTimeAsync(999);
    expect(lines).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(lines).toEqual(['Preparing the embedded database…']);
    await vi.advanceTimersByTimeAsync(5000);
    finish();
    await slow;
    expect(lines).toHaveLength(1);

    const quick = progress('Seeding the agent templates', () => new Promise<string>((resolve) => setTimeout(() => resolve('done'), 500)));
    await vi.advanceTimersByTimeAsync(500);
    expect(await quick).toBe('done');
    await vi.advanceTimersByTimeAsync(5000);
    expect(lines).toHaveLength(1);
  });

  it('prints every step as it begins at 0, and passes a failure on', async () => {
    const lines: string[] = [];
    const progress = startupProgress((line) => lines.push(line), 0);
    await expect(progress('Applying database migrations', () => Promise.reject(new Error('broken')))).rejects.toThrow('broken');
    expect(lines).toEqual(['Applying database migrations…']);
  });
});

/** Runs `npm run <script>` as the launcher does, with `env` and progress at 0 ms, until it prints `ready`; its output then. */
async function runUntil(script: 'main' | 'worker', env: Record<string, string>, ready: string) {
  const child = spawn(process.execPath, ['scripts/run.mjs', script], {
    cwd: new URL('..', import.meta.url).pathname,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '127.0.0.1', STARTUP_PROGRESS_AFTER_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes(ready)) resolve();
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => reject(new Error(`exited with ${code}:\n${output}`)));
    });
    return output;
  } finally {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  }
}

/** The progress lines a start printed, the launcher's own left out. */
const stepsOf = (output: string) => output.split('\n').filter((line) => line.endsWith('…') && !line.startsWith('Bundling'));

describe('npm start on a fresh data folder, every step reported (STARTUP_PROGRESS_AFTER_MS=0)', () => {
  it('says what it is doing, step by step, before its banner', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'callflow-progress-'));
    const dataDir = join(dir, 'data');
    try {
      const output = await runUntil('main', { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' }, 'REST v1:');
      expect(stepsOf(output.slice(0, output.indexOf('Service ready')))).toEqual([
        "Loading the service's modules…",
        `Preparing the embedded database in ${dataDir} (first start)…`,
        'Applying database migrations…',
        'Seeding the agent templates…',
        // The demo was seeded into a template at install; a first start copies it and moves it to today.
        'Moving the demo data to today (first start only)…',
        'Starting the job engine…',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

// A worker needs PostgreSQL: this part runs only there.
describe.runIf(inject('testDatabase').kind === 'postgres')('npm run worker, every step reported (STARTUP_PROGRESS_AFTER_MS=0)', () => {
  it('says what it is doing, step by step, before it says it started', async () => {
    const app = await startTestApp();
    try {
      const output = await runUntil(
        'worker',
        { DATABASE_URL: await databaseUrlOf(app), WORKER_PORT: '0', LOG_LEVEL: 'info' },
        '"msg":"dialer worker started"',
      );
      expect(stepsOf(output)).toEqual([
        "Loading the worker's modules…",
        'Waiting for PostgreSQL to accept connections…',
        'Connecting to PostgreSQL…',
        'Applying database migrations…',
        'Starting the job engine…',
      ]);
    } finally {
      await app.close();
    }
  }, 120_000);
});
