import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/database.js';
import { databaseUrl, emptyCluster, type TestDatabaseSource } from './database.js';

declare module 'vitest' {
  export interface ProvidedContext {
    testDatabase: TestDatabaseSource;
  }
}

// Migrates one template database for the whole run; each test file then gets its own copy
// (PostgreSQL: CREATE DATABASE ... TEMPLATE; PGlite: a fresh instance loaded from a dump).
export default async function setup(project: TestProject) {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (serverUrl) {
    const template = `callflow_tpl_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${template}"`);
    const db = await openDatabase({ kind: 'postgres', url: databaseUrl(serverUrl, template) });
    await db.migrate();
    await db.close();
    // The migration engine's own connections may linger; a template must have none to be copied.
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [template]);
    project.provide('testDatabase', { kind: 'postgres', serverUrl, template });
    return async () => {
      await admin.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
      await admin.end();
    };
  }

  const dir = await mkdtemp(join(tmpdir(), 'callflow-test-'));
  const pglite = await emptyCluster();
  const db = await openDatabase({ kind: 'pglite', instance: pglite });
  await db.migrate();
  const dump = await pglite.dumpDataDir('none');
  await db.close();
  const dumpPath = join(dir, 'migrated.tar');
  await writeFile(dumpPath, Buffer.from(await dump.arrayBuffer()));
  project.provide('testDatabase', { kind: 'pglite', dumpPath });
  return () => rm(dir, { recursive: true, force: true });
}
