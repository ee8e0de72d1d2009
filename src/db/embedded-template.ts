import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { applyMigrations, pgliteSession } from './migrations.js';
import { projectRoot } from './paths.js';

// Creating an embedded database (PGlite's initdb, in WebAssembly) takes three to four seconds, most of a
// first `npm start`. `npm install` makes one, migrated, and keeps its files as a tar archive; a new data
// folder is then unpacked from it in well under a second. The archive belongs to the installed PGlite
// version (its name says which), and migrations shipped after it was made are applied on start as usual.

const pglitePackage = join(projectRoot, 'node_modules/@electric-sql/pglite/package.json');
const pgliteVersion = (JSON.parse(readFileSync(pglitePackage, 'utf8')) as { version: string }).version;

export const embeddedTemplatePath = join(projectRoot, 'node_modules/.cache/callflow', `embedded-pglite-${pgliteVersion}.tar`);

/** The files of an empty, migrated embedded database, as PGlite dumps them. */
export async function migratedDump(): Promise<Blob> {
  const { PGlite } = await import('@electric-sql/pglite');
  const pglite = new PGlite();
  try {
    await applyMigrations(pgliteSession(pglite));
    return await pglite.dumpDataDir('none');
  } finally {
    await pglite.close();
  }
}

/** Writes the template archive (whole or not at all: a half-written one is never read). */
export async function writeEmbeddedTemplate(path = embeddedTemplatePath): Promise<void> {
  const dump = await migratedDump();
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
  await rename(partial, path);
}

/** The template to start a new data folder from: none when the folder holds a database, or no template was made. */
export async function templateFor(pgdata: string, path = embeddedTemplatePath): Promise<Blob | undefined> {
  if (existsSync(join(pgdata, 'PG_VERSION')) || !existsSync(path)) return undefined;
  return new Blob([await readFile(path)]);
}
