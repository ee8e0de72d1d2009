import { spawn, type ChildProcess } from 'node:child_process';
import { inject } from 'vitest';
import { TEST_SECRET, type TestApp } from './app.js';

// Worker processes (`npm run worker`) and server processes (`npm start`) on a test file's PostgreSQL
// database, as production runs them.

const root = new URL('../..', import.meta.url).pathname;

export function workerProcesses(defaults: Record<string, string>) {
  const workers: ChildProcess[] = [];
  /** What each worker wrote to stderr, to say why one ended by itself. */
  const printed = new Map<ChildProcess, string>();
  /** What each worker logged on stdout. */
  const logged = new Map<ChildProcess, string>();

  return {
    start(url: string, env: Record<string, string> = {}): ChildProcess {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker.ts'], {
        cwd: root,
        // Several workers run at once on this host: each serves its operations endpoints on a free port.
        env: { PATH: process.env.PATH, DATABASE_URL: url, LOG_LEVEL: 'warn', WORKER_PORT: '0', ...defaults, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      printed.set(child, '');
      logged.set(child, '');
      child.stderr!.on('data', (chunk: Buffer) => printed.set(child, printed.get(child) + chunk.toString()));
      child.stdout!.on('data', (chunk: Buffer) => logged.set(child, logged.get(child) + chunk.toString()));
      workers.push(child);
      return child;
    },

    /**
     * Sends `signal` and resolves with the worker's exit code once it has ended. A worker that had ended by
     * itself fails the test with what it printed, instead of waiting forever for an exit already past.
     */
    stop(child: ChildProcess, signal: NodeJS.Signals): Promise<number | null> {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`a worker ended by itself (${child.exitCode ?? child.signalCode}): ${printed.get(child)}`);
      }
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill(signal);
      return exited;
    },

    /** What the worker wrote to stderr so far. */
    stderr: (child: ChildProcess): string => printed.get(child) ?? '',

    /** The URL of the worker's operations endpoints, once it has started (its log says so at LOG_LEVEL=info). */
    listening(child: ChildProcess, timeoutMs = 180_000): Promise<string> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the worker did not start: ${printed.get(child)}`)), timeoutMs);
        const read = () => {
          const url = logged.get(child)!.match(/"url":"(http:[^"]+)"[^\n]*"msg":"dialer worker started"/)?.[1];
          if (!url) return;
          clearTimeout(timer);
          child.stdout!.off('data', read);
          resolve(url);
        };
        child.stdout!.on('data', read);
        read();
      });
    },

    /** Kills every worker still alive, so that none works on the next test's data. */
    async killAll(): Promise<void> {
      const alive = workers.splice(0).filter((w) => w.exitCode === null && w.signalCode === null);
      for (const w of alive) w.kill('SIGKILL');
      await Promise.all(alive.map((w) => new Promise((resolve) => w.once('exit', resolve))));
    },
  };
}

/** The URL of the test app's own database, for the workers. */
export async function databaseUrlOf(app: TestApp): Promise<string> {
  const [{ name }] = (await app.prisma.$queryRaw<{ name: string }[]>`SELECT current_database() AS name`) as [{ name: string }];
  const url = new URL((inject('testDatabase') as { serverUrl: string }).serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A server process (`src/main.ts`) on the database; resolves with its URL once it listens. */
export async function serverProcess(databaseUrl: string, env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: databaseUrl,
      JWT_SECRET: TEST_SECRET,
      SEED_DEMO: 'false',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const url = output.match(/GraphQL:\s+(http:\/\/\S+)\/graphql/)?.[1];
      if (url) resolve({ url, child });
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}:\n${output}`)));
  });
}

/** SIGTERM, then SIGKILL if it has not ended 20 s later. */
export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(killer);
}
