import { dynamicStatement, statement, type SqlSession, type SqlTransaction } from '../../db/sql.js';
import { DoNotCallRegistry } from '../../generated/prisma/enums.js';
import type { RegistryCopy } from '../calling-rules/registries.js';

// The registries' numbers and the imports that loaded them. registry_numbers is partitioned by registry
// (migration registries); an import loads a fresh table with COPY, indexes it, and swaps it in for the
// registry's partition, all in one transaction: a lookup sees the old copy or the new one, never half
// of either, and waits for the swap only for the few statements it takes.

const partition = (registry: DoNotCallRegistry) => `registry_numbers_${registry}`;
const next = (registry: DoNotCallRegistry) => `registry_numbers_${registry}_next`;

// Table names cannot be parameters: each registry's statements are written out once, from the enum.
const ddl = (registry: DoNotCallRegistry) => ({
  // One import of a registry at a time; another waits, then replaces what this one loaded.
  lock: statement(`registries.lock_${registry}`, `SELECT pg_advisory_xact_lock(hashtext('registry_numbers:${registry}'))`),
  create: dynamicStatement(
    `registries.create_${registry}`,
    // The check lets ATTACH PARTITION skip its scan of the rows; the default spares COPY the column.
    `CREATE TABLE ${next(registry)} (registry "DoNotCallRegistry" NOT NULL DEFAULT '${registry}' CONSTRAINT ${partition(registry)}_registry_check CHECK (registry = '${registry}'), number BIGINT NOT NULL)`,
  ),
  savepoint: dynamicStatement(`registries.savepoint`, 'SAVEPOINT registry_index'),
  rollbackToSavepoint: dynamicStatement(`registries.rollback_to_savepoint`, 'ROLLBACK TO SAVEPOINT registry_index'),
  // Built after the rows are in: one sort instead of an index kept up row by row.
  index: dynamicStatement(
    `registries.index_${registry}`,
    `ALTER TABLE ${next(registry)} ADD CONSTRAINT ${next(registry)}_pkey PRIMARY KEY (number, registry)`,
  ),
  dedupe: dynamicStatement(
    `registries.dedupe_${registry}`,
    `DELETE FROM ${next(registry)} a USING ${next(registry)} b WHERE a.number = b.number AND a.ctid > b.ctid`,
  ),
  count: dynamicStatement<{ count: bigint }>(`registries.count_${registry}`, `SELECT count(*) AS count FROM ${next(registry)}`),
  // Statistics from the start, so that the planner probes the index rather than guessing at an unknown table.
  analyze: dynamicStatement(`registries.analyze_${registry}`, `ANALYZE ${next(registry)}`),
  detach: dynamicStatement(`registries.detach_${registry}`, `ALTER TABLE registry_numbers DETACH PARTITION ${partition(registry)}`),
  drop: dynamicStatement(`registries.drop_${registry}`, `DROP TABLE ${partition(registry)}`),
  rename: dynamicStatement(`registries.rename_${registry}`, `ALTER TABLE ${next(registry)} RENAME TO ${partition(registry)}`),
  renameKey: dynamicStatement(
    `registries.rename_key_${registry}`,
    `ALTER TABLE ${partition(registry)} RENAME CONSTRAINT ${next(registry)}_pkey TO ${partition(registry)}_pkey`,
  ),
  attach: dynamicStatement(
    `registries.attach_${registry}`,
    `ALTER TABLE registry_numbers ATTACH PARTITION ${partition(registry)} FOR VALUES IN ('${registry}')`,
  ),
});

const DDL = Object.fromEntries(Object.values(DoNotCallRegistry).map((r) => [r, ddl(r)])) as Record<
  DoNotCallRegistry,
  ReturnType<typeof ddl>
>;

/** Starts a registry's replacement: its lock, and the empty table its numbers are loaded into. */
export async function beginReplacement(tx: SqlTransaction, registry: DoNotCallRegistry): Promise<void> {
  await tx.run(DDL[registry].lock);
  await tx.run(DDL[registry].create);
}

/** Starts a COPY of numbers (E.164 digits, one a line) into the table being loaded. */
export function copyNumbers(tx: SqlTransaction, registry: DoNotCallRegistry) {
  return tx.copyInto(next(registry), ['number']);
}

/**
 * Indexes the loaded numbers (a number the file lists twice is kept once) and swaps them in for the
 * registry's copy in force; returns how many numbers it holds.
 */
export async function swapIn(tx: SqlTransaction, registry: DoNotCallRegistry): Promise<bigint> {
  const s = DDL[registry];
  await tx.run(s.savepoint);
  try {
    await tx.run(s.index);
  } catch (error) {
    if ((error as { code?: string }).code !== '23505') throw error;
    await tx.run(s.rollbackToSavepoint);
    await tx.run(s.dedupe);
    await tx.run(s.index);
  }
  const [{ count }] = (await tx.run(s.count)) as [{ count: bigint }];
  await tx.run(s.analyze);
  for (const step of [s.detach, s.drop, s.rename, s.renameKey, s.attach]) await tx.run(step);
  return count;
}

const recordStatement = statement<ImportRow>(
  'registries.record_import',
  `INSERT INTO registry_imports (id, registry, downloaded_on, numbers, area_codes, imported_by, imported_at)
   VALUES ($1::uuid, $2::"DoNotCallRegistry", $3::date, $4, $5::text[], $6, $7)
   RETURNING ${importColumns('')}`,
);

function importColumns(prefix: string): string {
  return `${prefix}id, ${prefix}registry::text AS registry, ${prefix}downloaded_on AS "downloadedOn", ${prefix}numbers, ${prefix}area_codes AS "areaCodes",
          ${prefix}imported_by AS "importedBy", ${prefix}imported_at AS "importedAt"`;
}

/** One import of a registry's copy. */
export interface ImportRow {
  id: string;
  registry: DoNotCallRegistry;
  downloadedOn: Date;
  numbers: bigint;
  areaCodes: string[];
  importedBy: string;
  importedAt: Date;
}

export async function recordImport(tx: SqlSession, row: ImportRow): Promise<ImportRow> {
  const [saved] = await tx.run(recordStatement, [
    row.id,
    row.registry,
    row.downloadedOn.toISOString().slice(0, 10),
    row.numbers,
    row.areaCodes,
    row.importedBy,
    row.importedAt,
  ]);
  return saved!;
}

const copiesStatement = statement<ImportRow>(
  'registries.copies_in_force',
  `SELECT DISTINCT ON (i.registry) ${importColumns('i.')} FROM registry_imports i ORDER BY i.registry, i.imported_at DESC, i.id DESC`,
);

/** Each registry's copy in force: its newest import. */
export function copiesInForce(sql: SqlSession): Promise<ImportRow[]> {
  return sql.run(copiesStatement);
}

/**
 * The part of a statement that reads the registry copies in force as a JSON array of
 * { registry, downloadedOn } (the dialer's lock statement reads it with the campaign).
 */
export const COPIES_IN_FORCE_JSON = `(SELECT coalesce(json_agg(json_build_object('registry', c.registry, 'downloadedOn', c.downloaded_on)), '[]')
   FROM (SELECT DISTINCT ON (registry) registry, downloaded_on FROM registry_imports ORDER BY registry, imported_at DESC, id DESC) c)`;

/** The registry copies as the JSON fragment above gives them. */
export function readCopies(json: unknown): RegistryCopy[] {
  return (json as { registry: DoNotCallRegistry; downloadedOn: string }[]).map((c) => ({
    registry: c.registry,
    downloadedOn: new Date(`${c.downloadedOn}T00:00:00Z`),
  }));
}

/**
 * The part of a statement that finds the registry a contact's number (`phone`, E.164 text) is on, as
 * text; null when none. One probe of each partition's primary key.
 */
export const registryOf = (phone: string) =>
  `(SELECT r.registry::text FROM registry_numbers r
    WHERE r.number = CASE WHEN ${phone} ~ '^\\+[1-9][0-9]{1,14}$' THEN substr(${phone}, 2)::bigint END LIMIT 1)`;

const lookupStatement = statement<{ registry: DoNotCallRegistry | null }>(
  'registries.lookup',
  `SELECT ${registryOf('$1::text')} AS registry`,
);

/** The registry a number (E.164) is on, if any. */
export async function lookUp(sql: SqlSession, phoneNumber: string): Promise<DoNotCallRegistry | null> {
  return (await sql.run(lookupStatement, [phoneNumber]))[0]!.registry;
}
