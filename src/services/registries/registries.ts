import { z } from 'zod';
import { DoNotCallRegistry } from '../../generated/prisma/enums.js';
import { REGISTRY_RULES, ageInDays, staleCopies, staleDetail } from '../calling-rules/registries.js';
import type { SqlSession } from '../../db/sql.js';
import type { ServiceContext, ServiceEnv } from '../context.js';
import { ForbiddenError, ValidationError } from '../errors.js';
import { uuidv7 } from '../ids.js';
import { parseInput } from '../validation.js';
import { LINE_FORMATS, LineSplitter, parseLine } from './formats.js';
import * as store from './store.js';

// National do-not-call registries: shared reference data, not any customer's, that an operator loads
// from the registry's download file (an admin through GraphQL, or `npm run registry:import` for files
// of any size). An import replaces the registry's copy whole, atomically, and records the day the file
// was downloaded: the copy's age, which the calling rules hold solicitation to (calling-rules/registries.ts).

export const registryImportInput = z.object({
  registry: z.enum(DoNotCallRegistry).describe('us_dnc, ca_dncl, uk_tps or uk_ctps.'),
  downloaded_on: z.iso.date({ error: 'Use a date, e.g. 2026-11-20.' }).describe('The day the file was downloaded from the registry.'),
});

/** How many bad lines an import reports before it gives up reading. */
const MAX_LINE_ERRORS = 10;
/** Numbers per COPY: PGlite holds a COPY's rows in memory until it ends, so a big file goes in several. */
const NUMBERS_PER_COPY = 1_000_000;

export type RegistryImport = store.ImportRow;

/** A file as it streams in: text, or bytes (read as Latin-1: the files are ASCII). */
export type FileChunks = AsyncIterable<string | Uint8Array> | Iterable<string>;

/**
 * Reads a registry's file (chunks of text, streamed: memory stays bounded whatever its size) into a
 * fresh copy and swaps it in for the registry's copy in force. A file with a line that is not a number
 * of the registry changes nothing: the first lines in error are named, with their numbers.
 */
export async function importRegistry(
  env: Pick<ServiceEnv, 'sql' | 'clock'>,
  raw: unknown,
  file: FileChunks,
  importedBy: string,
): Promise<RegistryImport> {
  const input = parseInput(registryImportInput, raw);
  const downloadedOn = new Date(`${input.downloaded_on}T00:00:00Z`);
  const now = env.clock.now();
  if (downloadedOn > now) throw ValidationError.field('downloaded_on', 'Must not be in the future.');
  const registry = input.registry;
  return env.sql.transaction(async (tx) => {
    await store.beginReplacement(tx, registry);
    const prefixes = new Set<string>();
    const errors: string[] = [];
    const splitter = new LineSplitter();
    let lineNumber = 0;
    let copy = store.copyNumbers(tx, registry);
    let inCopy = 0;
    const take = async (lines: string[]) => {
      let text = '';
      for (const line of lines) {
        lineNumber += 1;
        const parsed = parseLine(registry, line);
        if (parsed === 'blank') continue;
        if (parsed === null) {
          errors.push(`Line ${lineNumber}: "${line.trim().slice(0, 40)}" is not ${LINE_FORMATS[registry]}.`);
          if (errors.length >= MAX_LINE_ERRORS) throw new ValidationError({ file: errors });
          continue;
        }
        prefixes.add(parsed.prefix);
        text += `${parsed.digits}\n`;
        inCopy += 1;
      }
      if (errors.length || text === '') return;
      await copy.write(text);
      if (inCopy >= NUMBERS_PER_COPY) {
        await copy.end();
        copy = store.copyNumbers(tx, registry);
        inCopy = 0;
      }
    };
    for await (const chunk of file)
      await take(
        splitter.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1')),
      );
    await take(splitter.end());
    if (errors.length) throw new ValidationError({ file: errors });
    await copy.end();
    if (lineNumber === 0) throw ValidationError.field('file', 'The file is empty.');
    const numbers = await store.swapIn(tx, registry);
    return store.recordImport(tx, {
      id: uuidv7(),
      registry,
      downloadedOn,
      numbers,
      areaCodes: [...prefixes].sort(),
      importedBy,
      importedAt: now,
    });
  });
}

/** An admin's import through the API, recorded under the admin's id; the CLI does the same without a request. */
export async function importRegistryAsAdmin(ctx: ServiceContext, raw: unknown, file: FileChunks): Promise<RegistryImport> {
  if (!ctx.user.isAdmin) throw new ForbiddenError();
  return importRegistry(ctx, raw, file, ctx.user.id);
}

/** A registry's copy in force, as an operator checks it. */
export interface RegistryStatus extends RegistryImport {
  label: string;
  ageDays: number;
  maxAgeDays: number;
  stale: boolean;
}

/** Each registry's copy in force with its age: admins only. */
export async function listRegistries(ctx: ServiceContext): Promise<RegistryStatus[]> {
  if (!ctx.user.isAdmin) throw new ForbiddenError();
  const now = ctx.clock.now();
  return (await store.copiesInForce(ctx.sql)).map((copy) => {
    const rule = REGISTRY_RULES[copy.registry];
    const ageDays = ageInDays(copy, now);
    return { ...copy, label: rule.label, ageDays, maxAgeDays: rule.maxAgeDays, stale: ageDays > rule.maxAgeDays };
  });
}

/** Why solicitation cannot call now (a copy in force is too old), in words naming each registry and its age; null when it can. */
export async function staleRegistries(sql: SqlSession, now: Date): Promise<string | null> {
  const stale = staleCopies(await store.copiesInForce(sql), now);
  return stale.length ? staleDetail(stale) : null;
}
