import { spawn } from 'node:child_process';
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
