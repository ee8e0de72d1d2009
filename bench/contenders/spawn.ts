import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { profileArgs, serverReady, type Server } from '../support.js';

// Starts a contender's script as a server process of its own. tsx is loaded into that same node process
// (`node --import tsx`, not the tsx CLI, which would run the script in a child), so that the pid whose
// CPU is read is the server's.

const root = new URL('../..', import.meta.url).pathname;

/** Runs `script` (relative to the repository) with `env`; resolves once it prints `listening on <url>`. */
export function startScript(script: string, env: Record<string, string>): Promise<Server> {
  const child = spawn(process.execPath, [...profileArgs, '--import', 'tsx', script], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return serverReady(child, /listening on (http:\/\/\S+)/, script);
}

const V5 = `${root}bench/contenders/postgraphile-v5/`;
const V5_NODE = `${V5}node_modules/node/bin/node`;

/** PostGraphile v5's package (its lockfile, and the Node 22 it runs on), installed on first use. */
function installV5(): Promise<void> {
  if (existsSync(V5_NODE)) return Promise.resolve();
  console.log('installing PostGraphile v5 and Node 22 for the bench (bench/contenders/postgraphile-v5) ...');
  return new Promise((resolve, reject) => {
    execFile('npm', ['ci', '--no-audit', '--no-fund'], { cwd: V5 }, (error, stdout, stderr) =>
      error ? reject(new Error(`npm ci in ${V5} failed:\n${stdout}${stderr}`)) : resolve(),
    );
  });
}

/** PostGraphile v5 (postgraphile-v5/server.mjs) on its own Node 22; resolves once it listens. */
export async function startPostgraphileV5(env: Record<string, string>): Promise<Server> {
  await installV5();
  const child = spawn(V5_NODE, [...profileArgs, 'server.mjs'], {
    cwd: V5,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return serverReady(child, /listening on (http:\/\/\S+)/, 'postgraphile v5');
}
