import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './support/wait.js';

// scripts/run.mjs, the launcher of npm start, npm run dev and npm run worker, on a project of its own: a
// tiny server in src/ that answers what its modules say, so a test can change them.

const root = new URL('..', import.meta.url).pathname;
let project: string;

const SERVER = `import { createServer } from 'node:http';
import { greeting } from './greeting.js';
import data from './data/numbers.json' with { type: 'json' };
const server = createServer((_req, res) => res.end(JSON.stringify({ greeting, sum: data.reduce((a: number, b: number) => a + b, 0) })));
server.listen(0, '127.0.0.1', () => console.log('Service ready on ' + (server.address() as { port: number }).port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

async function writeSource(name: string, text: string) {
  await writeFile(join(project, 'src', name), text);
}

function launch(args: string[]): { child: ChildProcess; ports: number[]; output: () => string } {
  const child = spawn(process.execPath, ['scripts/run.mjs', ...args], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const ports: number[] = [];
  const read = (chunk: Buffer) => {
    output += chunk.toString();
    for (const match of chunk.toString().matchAll(/Service ready on (\d+)/g)) ports.push(Number(match[1]));
  };
  child.stdout!.on('data', read);
  child.stderr!.on('data', read);
  return { child, ports, output: () => output };
}

/** Waits (up to 20 s) until `condition` holds. */
const until = (condition: () => boolean | Promise<boolean>, what: string) =>
  waitFor(async () => ((await condition()) ? true : undefined), 20_000, what);

const answer = async (port: number) => (await (await fetch(`http://127.0.0.1:${port}/`)).json()) as { greeting: string; sum: number };

/** The launcher's children as `ps` shows them: command and state (Z: exited and not reaped). */
function childrenOf(pid: number): { state: string; command: string }[] {
  let lines: string;
  try {
    lines = execFileSync('ps', ['--ppid', String(pid), '-o', 'stat=,comm='], { encoding: 'utf8' });
  } catch {
    // ps exits 1 when it finds none.
    return [];
  }
  return lines
    .trim()
    .split('\n')
    .map((line) => ({ state: line.trim()[0]!, command: line.trim().split(/\s+/)[1]! }));
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), 'callflow-launcher-'));
  await mkdir(join(project, 'scripts'));
  await mkdir(join(project, 'src', 'data'), { recursive: true });
  await copyFile(join(root, 'scripts/run.mjs'), join(project, 'scripts/run.mjs'));
  await symlink(join(root, 'node_modules'), join(project, 'node_modules'));
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'launcher-test', type: 'module' }));
  await writeSource('main.ts', SERVER);
  await writeSource('greeting.ts', "export const greeting: string = 'hello';\n");
  await writeFile(join(project, 'src/data/numbers.json'), '[1, 2, 3]');
});
afterAll(() => rm(project, { recursive: true, force: true }));

describe('node scripts/run.mjs <entry> (npm start)', () => {
  it('runs the entry as JavaScript, JSON imports included, and transpiles again only after a change', async () => {
    const first = launch(['main']);
    await until(() => first.ports.length === 1, 'a start');
    expect(await answer(first.ports[0]!)).toEqual({ greeting: 'hello', sum: 6 });
    expect(await stop(first.child)).toBe(0);
    const built = (await stat(join(project, '.run/start/main.js'))).mtimeMs;

    const second = launch(['main']);
    await until(() => second.ports.length === 1, 'a start');
    expect(await stop(second.child)).toBe(0);
    expect((await stat(join(project, '.run/start/main.js'))).mtimeMs).toBe(built);
  }, 60_000);

  it('says how to use it when the entry does not exist', async () => {
    const wrong = launch(['nope']);
    expect(await new Promise((resolve) => wrong.child.once('exit', resolve))).toBe(2);
    expect(wrong.output()).toContain('Usage: node scripts/run.mjs [--watch] <entry of src/');
  });
});

describe('node scripts/run.mjs --watch <entry> (npm run dev)', () => {
  it('restarts on each change, new files included, and leaves no child unreaped', async () => {
    const dev = launch(['--watch', 'main']);
    try {
      await until(() => dev.ports.length === 1, 'a start');
      expect((await answer(dev.ports[0]!)).greeting).toBe('hello');
      for (const [round, word] of ['bonjour', 'hallo', 'hola'].entries()) {
        await writeSource('greeting.ts', `export const greeting: string = '${word}';\n`);
        await until(() => dev.ports.length === round + 2, 'a start');
        expect((await answer(dev.ports.at(-1)!)).greeting).toBe(word);
      }
      // A module that did not exist when the watcher started.
      await writeSource('punctuation.ts', "export const mark = '!';\n");
      await writeSource('greeting.ts', "import { mark } from './punctuation.js';\nexport const greeting: string = 'ciao' + mark;\n");
      await until(async () => dev.ports.length > 4 && (await answer(dev.ports.at(-1)!)).greeting === 'ciao!', 'the new module');

      const children = childrenOf(dev.child.pid!);
      expect(children.filter((c) => c.state === 'Z')).toEqual([]);
      expect(children.map((c) => c.command).sort()).toEqual(['esbuild', 'node']);
    } finally {
      expect(await stop(dev.child)).toBe(0);
    }
    expect(childrenOf(dev.child.pid!)).toEqual([]);
  }, 120_000);
});
