import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { bindMigrationAwareSqlAdapterFactory, type SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import * as engineGlue from '@prisma/schema-engine-wasm/schema_engine_bg';
import type { MigrationList, SchemaEngine } from '@prisma/schema-engine-wasm';
import { migrationsDir, projectRoot, schemaPath } from './paths.js';

// Prisma's schema engine as WebAssembly, driven through our own driver adapters, for drafting migrations
// (`npm run db:migration`). The Prisma CLI would download a native engine for this; the wasm build ships
// on npm, so it works offline. Applying migrations does not need it (migrations.ts).

// Node has WebAssembly; TypeScript's ES libs do not describe it.
declare const WebAssembly: {
  instantiate(bytes: Uint8Array, imports: object): Promise<{ instance: { exports: Record<string, unknown> } }>;
};

let engineClass: Promise<typeof engineGlue.SchemaEngine> | undefined;

/** Node 20 cannot import .wasm as an ES module, so the glue is bound to a module compiled by hand. */
function loadEngineClass(): Promise<typeof engineGlue.SchemaEngine> {
  engineClass ??= (async () => {
    const entry = createRequire(import.meta.url).resolve('@prisma/schema-engine-wasm');
    const bytes = await readFile(join(dirname(entry), 'schema_engine_bg.wasm'));
    const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': engineGlue });
    engineGlue.__wbg_set_wasm(instance.exports as never);
    (instance.exports.__wbindgen_start as () => void)();
    return engineGlue.SchemaEngine;
  })();
  return engineClass;
}

export async function withSchemaEngine<T>(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  run: (engine: SchemaEngine) => Promise<T>,
): Promise<T> {
  const SchemaEngineClass = await loadEngineClass();
  const engine = (await SchemaEngineClass.new(
    { datamodels: undefined },
    () => {},
    bindMigrationAwareSqlAdapterFactory(adapterFactory),
  )) as unknown as SchemaEngine;
  try {
    return await run(engine);
  } finally {
    engine.free();
  }
}

export async function readMigrationList(dir = migrationsDir): Promise<MigrationList> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const folders = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const lockPath = join(dir, 'migration_lock.toml');
  return {
    baseDir: dir,
    lockfile: { path: 'migration_lock.toml', content: await readFile(lockPath, 'utf8').catch(() => null) },
    shadowDbInitScript: '',
    migrationDirectories: await Promise.all(
      folders.map(async (name) => ({
        path: name,
        migrationFile: {
          path: 'migration.sql',
          content: await readFile(join(dir, name, 'migration.sql'), 'utf8').then(
            (value) => ({ tag: 'ok' as const, value }),
            (error: Error) => ({ tag: 'error' as const, value: error.message }),
          ),
        },
      })),
    ),
  };
}

const noFilters = { externalTables: [], externalEnums: [] };

/**
 * The SQL that takes the database built by the migrations to the one described by the schema.
 * The wasm engine cannot create a shadow database on its own, so the caller hands it a scratch database:
 * the migrations are applied there, the result is introspected, and the two datamodels are diffed.
 */
/** Introspection reads partial indexes only with the preview feature that prisma/schema.prisma turns on. */
const INTROSPECTION_SCHEMA = `generator client {
  provider        = "prisma-client"
  previewFeatures = ["partialIndexes"]
}

datasource db {
  provider = "postgresql"
}
`;

export async function draftMigration(scratch: SqlMigrationAwareDriverAdapterFactory): Promise<string | null> {
  const migrationsList = await readMigrationList();
  const target = await readFile(schemaPath, 'utf8');
  return withSchemaEngine(scratch, async (engine) => {
    await engine.applyMigrations({ migrationsList, filters: noFilters });
    const from = migrationsList.migrationDirectories.length
      ? {
          tag: 'schemaDatamodel' as const,
          ...(
            await engine.introspect({
              schema: { files: [{ path: 'introspected.prisma', content: INTROSPECTION_SCHEMA }] },
              baseDirectoryPath: projectRoot,
              force: true,
              compositeTypeDepth: -1,
              namespaces: null,
            })
          ).schema,
        }
      : { tag: 'empty' as const };
    const diff = await engine.diff({
      from,
      to: { tag: 'schemaDatamodel', files: [{ path: schemaPath, content: target }] },
      script: true,
      exitCode: null,
      filters: noFilters,
    });
    const script = diff.stdout ?? '';
    return script.trim() === '' || script.includes('This is an empty migration.') ? null : script;
  });
}
