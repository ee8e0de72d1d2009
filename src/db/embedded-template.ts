import { cpSync, existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { embeddedOptions } from './embedded-settings.js';
import { applyMigrations, pgliteSession } from './migrations.js';
import { projectRoot } from './paths.js';

// Creating an embedded database (PGlite's initdb, in WebAssembly) takes three to four seconds, most of a
// first `npm start`. `npm install` makes one, migrated, in a folder of its own, and a second with the demo
// data; a new data folder is a copy of one of them, made in a few hundred milliseconds (unpacking an
// archive of it through PGlite's file system took a second or more). The templates belong to the
// installed PGlite version (their names say which), and migrations shipped after they were made are
// applied on start as usual.

const pglitePackage = join(projectRoot, 'node_modules/@electric-sql/pglite/package.json');
const pgliteVersion = (JSON.parse(readFileSync(pglitePackage, 'utf8')) as { version: string }).version;

export const embeddedTemplatePath = join(projectRoot, 'node_modules/.cache/callflow', `embedded-pglite-${pgliteVersion}`);

/** The same database with the demo data seeded (src/demo/template.ts), which a first start with demo data copies. */
export const demoTemplatePath = `${embeddedTemplatePath}-demo`;

/**
 * Writes a template folder: a migrated database (a new one, or a copy of the template at `base`), with
 * what `prepare` adds (it gets the database and its folder), whole or not at all (a half-written one is
 * never read).
 */
export async function writeEmbeddedTemplate(
  path = embeddedTemplatePath,
  prepare?: (pglite: PGlite, dir: string) => Promise<void>,
  base?: string,
): Promise<void> {
  const { PGlite } = await import('@electric-sql/pglite');
  const partial = `${path}.${process.pid}.partial`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(dirname(partial), { recursive: true });
  if (base) cpSync(base, partial, { recursive: true });
  const pglite = new PGlite(embeddedOptions(PGlite, { dataDir: partial }));
  try {
    await applyMigrations(pgliteSession(pglite));
    await prepare?.(pglite, partial);
  } finally {
    await pglite.close();
  }
  await rm(path, { recursive: true, force: true });
  await rename(partial, path);
}

const holdsDatabase = (pgdata: string) => existsSync(join(pgdata, 'PG_VERSION'));

/** Whether opening `pgdata` creates a database: it holds none yet (a first start). */
export function isNewDatabase(pgdata: string): boolean {
  return !holdsDatabase(pgdata);
}

/**
 * Makes `pgdata` a copy of the template when it holds no database and a template was made; returns
 * whether it did (otherwise PGlite creates the database itself, or opens the one there).
 */
export async function copyTemplate(pgdata: string, path = embeddedTemplatePath): Promise<boolean> {
  if (holdsDatabase(pgdata) || !holdsDatabase(path)) return false;
  // Node's asynchronous cp took six times as long for the template's thousand files, on a start with nothing else to do.
  cpSync(path, pgdata, { recursive: true });
  return true;
}
