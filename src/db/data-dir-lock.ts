import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

// PGlite has no cross-process lock: two processes on one data folder would corrupt it. The first process
// writes its pid here; a second one refuses to start while that process is alive.

export class DataDirInUseError extends Error {}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the folder for this process; returns the function that gives it back. */
export async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, 'owner.pid');
  for (;;) {
    try {
      await writeFile(file, String(process.pid), { flag: 'wx' });
      return () => rm(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(await readFile(file, 'utf8').catch(() => ''));
      if (owner && owner !== process.pid && isAlive(owner)) {
        throw new DataDirInUseError(
          `The embedded database in ${dir} is in use by process ${owner}. Stop it, or give this one another DATA_DIR.`,
        );
      }
      // Left behind by a process that is gone: take it over.
      await rm(file, { force: true });
    }
  }
}
