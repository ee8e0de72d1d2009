import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { lockDataDir } from './data-dir-lock.js';
import { embeddedOptions } from './embedded-settings.js';
import { copyTemplate, demoTemplatePath, isNewDatabase } from './embedded-template.js';

// The embedded database in a data folder: locked to this process, made from the template on a first
// start, opened. A start begins this before it loads the service's modules (main.ts): reading PGlite's
// files, copying the template and compiling its WebAssembly go on beside the loading, on other threads.

/** Where the embedded database's own files are, in a data folder. */
export const embeddedDataPath = (dataDir: string) => resolve(dataDir, 'pgdata');

export interface EmbeddedDatabase {
  pglite: PGlite;
  /** Closes the database and frees the data folder. */
  close(): Promise<void>;
}

/** An opening under way, begun before the service's modules loaded. */
export interface EmbeddedOpening {
  /** Whether the folder held no database when the opening began (a first start). */
  firstStart: boolean;
  database: Promise<EmbeddedDatabase>;
}

/** Opens the database in `dataDir`; a new one is a copy of the template, with the demo data when `demo`. */
export async function openEmbedded(dataDir: string, demo = false): Promise<EmbeddedDatabase> {
  // Loaded only in embedded mode: PGlite costs some 50 MB of memory a server on PostgreSQL does not need.
  const { PGlite } = await import('@electric-sql/pglite');
  const unlock = await lockDataDir(resolve(dataDir));
  try {
    // PGlite does not create the parent folders of its data directory.
    const dir = embeddedDataPath(dataDir);
    await mkdir(dir, { recursive: true });
    if (!(demo && (await copyTemplate(dir, demoTemplatePath)))) await copyTemplate(dir);
    const pglite = new PGlite(embeddedOptions(PGlite, { dataDir: dir }));
    await pglite.waitReady;
    return {
      pglite,
      async close() {
        await pglite.close();
        await unlock();
      },
    };
  } catch (error) {
    await unlock();
    throw error;
  }
}

/** Begins opening; whoever awaits `database` gets its refusal (a folder in use) there. */
export function openEmbeddedAhead(dataDir: string, demo = false): EmbeddedOpening {
  const opening = { firstStart: isNewDatabase(embeddedDataPath(dataDir)), database: openEmbedded(dataDir, demo) };
  opening.database.catch(() => {});
  return opening;
}
