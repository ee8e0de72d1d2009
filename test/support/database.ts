import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { inject } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { embeddedOptions } from '../../src/db/embedded-settings.js';

export type TestDatabaseSource = { kind: 'postgres'; serverUrl: string; template: string } | { kind: 'pglite'; dumpPath: string };

// Each dump is read once per worker: files that share a worker load their databases from the same copy.
const pgliteDumps = new Map<string, Promise<Blob>>();

const modules = fileURLToPath(new URL('../../node_modules/', import.meta.url));
const pgliteVersion = (JSON.parse(readFileSync(join(modules, '@electric-sql/pglite/package.json'), 'utf8')) as { version: string }).version;
const initdbPath = join(modules, '.cache/callflow-test', `initdb-pglite-${pgliteVersion}.tar`);
let initdb: Promise<Blob> | undefined;

/**
 * A new, empty embedded cluster, not migrated. PGlite's initdb takes several seconds (far more on a
 * loaded machine) and its result depends only on the PGlite version, so it is kept (whole or not at
 * all) and each caller gets a copy of it.
 */
export async function emptyCluster(): Promise<PGlite> {
  initdb ??= existsSync(initdbPath) ? readFile(initdbPath).then((bytes) => new Blob([bytes])) : makeInitdb();
  return new PGlite(embeddedOptions(PGlite, { loadDataDir: await initdb }));
}

async function makeInitdb(): Promise<Blob> {
  const pglite = new PGlite(embeddedOptions(PGlite));
  try {
    await pglite.waitReady;
    const dump = await pglite.dumpDataDir('none');
    await mkdir(dirname(initdbPath), { recursive: true });
    const partial = `${initdbPath}.${process.pid}.partial`;
    await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
    await rename(partial, initdbPath);
    return dump;
  } finally {
    await pglite.close();
  }
}

export function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/**
 * Ends the pools on a scratch database, then drops it. A pool's end resolves before the server has seen
 * its sessions go, and a forced drop meanwhile ends them with an error no listener takes (an uncaught
 * exception, which fails the whole run): the drop waits, 30 s at most, until the server shows none.
 */
export async function dropScratchDatabase(admin: pg.Client, name: string, pools: pg.Pool[]): Promise<void> {
  await Promise.all(pools.map((pool) => pool.end()));
  for (let i = 0; i < 300; i += 1) {
    const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
    if (rows[0]!.n === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}

/**
 * A migrated database of this test file's own, dropped again by `close()`. On PostgreSQL, `through`
 * (`host:port`) sends the connections to that address instead, such as a proxy in front of the server.
 */
export async function openTestDatabase(options: { through?: string } = {}): Promise<Database> {
  const source = inject('testDatabase');
  if (source.kind === 'pglite') {
    let dump = pgliteDumps.get(source.dumpPath);
    if (!dump) pgliteDumps.set(source.dumpPath, (dump = readFile(source.dumpPath).then((bytes) => new Blob([bytes]))));
    return openDatabase({ kind: 'pglite', instance: new PGlite(embeddedOptions(PGlite, { loadDataDir: await dump })) });
  }
  const name = `callflow_test_${randomUUID().replace(/-/g, '')}`;
  const admin = new pg.Client({ connectionString: source.serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${source.template}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(databaseUrl(source.serverUrl, name));
  if (options.through) url.host = options.through;
  const db = await openDatabase({ kind: 'postgres', url: url.toString() });
  return {
    ...db,
    async close() {
      await db.close();
      const dropper = new pg.Client({ connectionString: source.serverUrl });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await dropper.end();
    },
  };
}
