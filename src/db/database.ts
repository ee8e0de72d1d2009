import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaClient } from '../generated/prisma/client.js';
import { lockDataDir } from './data-dir-lock.js';
import { applyMigrations } from './schema-engine.js';

export type Prisma = PrismaClient;

export interface Database {
  kind: 'postgres' | 'pglite';
  prisma: PrismaClient;
  /** Applies pending migrations; returns the names applied. */
  migrate(): Promise<string[]>;
  /** Counts the SQL statements Prisma sends, for tests and benchmarks. */
  statementCount(): number;
  close(): Promise<void>;
}

export type DatabaseTarget =
  | { kind: 'postgres'; url: string }
  | { kind: 'pglite'; dataDir: string }
  | { kind: 'pglite'; instance: PGlite };

/** With a PostgreSQL URL, a real server through node-postgres; otherwise PGlite in a local folder. */
export async function openDatabase(target: DatabaseTarget): Promise<Database> {
  let factory: SqlMigrationAwareDriverAdapterFactory;
  let closeDriver: () => Promise<void> = async () => {};
  if (target.kind === 'postgres') {
    factory = new PrismaPg({ connectionString: target.url, max: 10 });
  } else if ('instance' in target) {
    const pglite = target.instance;
    await pglite.waitReady;
    factory = new PrismaPGlite(pglite);
    closeDriver = () => pglite.close();
  } else {
    const unlock = await lockDataDir(resolve(target.dataDir));
    // PGlite does not create the parent folders of its data directory.
    const dir = resolve(target.dataDir, 'pgdata');
    await mkdir(dir, { recursive: true });
    const pglite = new PGlite(dir);
    await pglite.waitReady;
    factory = new PrismaPGlite(pglite);
    closeDriver = async () => {
      await pglite.close();
      await unlock();
    };
  }

  const prisma = new PrismaClient({ adapter: factory, log: [{ emit: 'event', level: 'query' }] });
  let statements = 0;
  prisma.$on('query', () => {
    statements += 1;
  });

  return {
    kind: target.kind,
    prisma,
    migrate: () => applyMigrations(factory),
    statementCount: () => statements,
    async close() {
      await prisma.$disconnect();
      await closeDriver();
    },
  };
}
