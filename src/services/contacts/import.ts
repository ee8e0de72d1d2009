import { z } from 'zod';
import type { Prisma } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { uuidv7 } from '../ids.js';
import { NON_FIELD, ValidationError, type FieldErrors } from '../errors.js';
import { toE164 } from '../phone.js';
import { parseInput, type RawInput } from '../validation.js';
import { NotCsvError, parseCsv, type ParsedTable } from './csv.js';
import { doNotCallSet } from './do-not-call.js';
import { canonicalData, displayName, hasPhoneColumn, isTimeZone, mergeData, planColumns, readData, type ContactData } from './fields.js';
import { refreshTotals } from './groups.js';

// Importing creates a contact group from rows (JSON) or a CSV file, all or nothing.

export const importInput = z.object({
  groupName: z.string().trim().min(1).max(255),
  description: z.string().max(10_000).default(''),
  csvData: z.array(z.unknown()).optional(),
  /** The text of an uploaded CSV file. */
  csvText: z.string().optional(),
  selectedHeaders: z.array(z.string().trim().min(1).max(255)).optional(),
  /** ISO country for numbers written without a country code; the user's default (US) otherwise. */
  defaultCountry: z
    .string()
    .regex(/^[A-Za-z]{2}$/, { error: 'Use a two-letter ISO country code, e.g. US.' })
    .transform((c) => c.toUpperCase())
    .optional(),
});
export type ImportInput = RawInput<typeof importInput>;

export interface ImportResult {
  success: true;
  groupId: string;
  totalImported: number;
  totalInvalid: number;
  totalDuplicates: number;
  totalDoNotCall: number;
}

const MAX_ROW_ERRORS = 10;
/** The column the contacts table keeps a number in; longer junk stays only in `data`. */
const PHONE_COLUMN_LENGTH = 32;

interface Draft {
  id: string;
  phone_number: string | null;
  status: 'active' | 'invalid' | 'do_not_call';
  data: ContactData;
  timezone: string | null;
}

export async function importContacts(ctx: ServiceContext, raw: ImportInput): Promise<ImportResult> {
  const input = parseInput(importInput, raw);
  const source = input.csvText !== undefined ? 'file' : 'csvData';
  const table = readTable(input, ctx.settings.importMaxRows);
  const headers = selectHeaders(table.headers, input.selectedHeaders);
  const plan = planColumns(headers);
  if (table.rows.length === 0) throw ValidationError.field(source, 'There are no rows to import.');
  if (!hasPhoneColumn(plan)) {
    throw ValidationError.field(source, 'No column holds phone numbers: name one "Phone", "Phone Number" or "Mobile".');
  }

  const user = await ctx.db.user.findUniqueOrThrow({ where: { id: ctx.user.id }, select: { defaultCountry: true } });
  const country = input.defaultCountry ?? user.defaultCountry;
  const blocked = await doNotCallSet(ctx.db, ctx.user.id);
  const counts = { imported: 0, invalid: 0, duplicates: 0, doNotCall: 0 };

  const groupId = await ctx.db.$transaction(
    async (tx) => {
      const group = await tx.contactGroup.create({
        data: { userId: ctx.user.id, name: input.groupName, description: input.description, csvHeaders: headers },
        select: { id: true },
      });
      // Rows travel to the database as JSON documents of CHUNK_ROWS rows, one statement each. While the
      // database writes one chunk, this process prepares the next, so both cores work.
      const write = (drafts: Draft[], sql: string) =>
        tx.$executeRawUnsafe(sql, JSON.stringify(drafts.map(toRecord)), ctx.user.id, group.id);
      let inFlight: Promise<unknown> = Promise.resolve();
      // A number seen before maps to its draft until that is written, then only to its id, so that the
      // memory of a big import does not grow with its size. Duplicates of written rows are rare and are
      // merged at the end.
      const byNumber = new Map<string, Draft | string>();
      const lateDuplicates: { id: string; data: ContactData }[] = [];
      let chunk: Draft[] = [];

      for (let index = 0; index < table.rows.length; index += 1) {
        const data = canonicalData(plan, table.rows[index]!, country);
        // Each source row is done with once read: letting it go keeps the peak memory of big imports down.
        table.rows[index] = EMPTY_ROW;
        const given = data.phone_number ?? '';
        const e164 = given ? toE164(given, country) : null;
        const key = e164 ?? (given ? given.slice(0, PHONE_COLUMN_LENGTH) : null);
        const earlier = key ? byNumber.get(key) : undefined;
        if (earlier) {
          // The first row of a number wins; later rows fill in what it left blank.
          if (typeof earlier === 'string') lateDuplicates.push({ id: earlier, data });
          else earlier.data = mergeData(data, earlier.data);
          counts.duplicates += 1;
        } else {
          const draft: Draft = {
            id: uuidv7(),
            phone_number: key,
            status: !e164 ? 'invalid' : blocked.has(e164) ? 'do_not_call' : 'active',
            data,
            timezone: timezoneOf(data),
          };
          chunk.push(draft);
          if (key) byNumber.set(key, draft);
          counts.imported += 1;
          if (draft.status === 'invalid') counts.invalid += 1;
          if (draft.status === 'do_not_call') counts.doNotCall += 1;
        }
        if (chunk.length === CHUNK_ROWS) {
          await inFlight;
          inFlight = write(chunk, INSERT_SQL).then((n) => n);
          for (const draft of chunk) if (draft.phone_number) byNumber.set(draft.phone_number, draft.id);
          chunk = [];
        }
        // Let the statement in flight make progress while the rows are being read.
        if (index % YIELD_EVERY === YIELD_EVERY - 1) await new Promise((resolve) => setImmediate(resolve));
      }
      await inFlight;
      if (chunk.length) await write(chunk, INSERT_SQL);
      if (lateDuplicates.length) await mergeLateDuplicates(tx, lateDuplicates, write);
      await refreshTotals(tx, [group.id]);
      return group.id;
    },
    { timeout: 120_000, maxWait: 10_000 },
  );

  return {
    success: true,
    groupId,
    totalImported: counts.imported,
    totalInvalid: counts.invalid,
    totalDuplicates: counts.duplicates,
    totalDoNotCall: counts.doNotCall,
  };
}

const CHUNK_ROWS = 5_000;
const EMPTY_ROW: Record<string, unknown> = {};
const YIELD_EVERY = 500;

const toRecord = (d: Draft) => ({ ...d, name: displayName(d.data) });

async function mergeLateDuplicates(
  tx: Prisma.TransactionClient,
  duplicates: { id: string; data: ContactData }[],
  write: (drafts: Draft[], sql: string) => Promise<unknown>,
) {
  const ids = [...new Set(duplicates.map((d) => d.id))];
  const rows = await tx.contact.findMany({ where: { id: { in: ids } }, select: { id: true, phoneNumber: true, status: true, data: true } });
  const merged = new Map(rows.map((r) => [r.id, { ...r, data: readData(r.data) }]));
  for (const { id, data } of duplicates) {
    const row = merged.get(id)!;
    row.data = mergeData(data, row.data);
  }
  await write(
    [...merged.values()].map((r) => ({ id: r.id, phone_number: r.phoneNumber, status: r.status, data: r.data, timezone: timezoneOf(r.data) })),
    UPDATE_SQL,
  );
}

const timezoneOf = (data: ContactData) => (data.timezone && isTimeZone(data.timezone) ? data.timezone : null);

const RECORDS = `jsonb_to_recordset($1::jsonb) AS r(id uuid, phone_number text, status text, data jsonb, timezone text, name text)`;
const INSERT_SQL = `INSERT INTO contacts (id, user_id, contact_group_id, phone_number, status, data, timezone, name, created_at, updated_at)
  SELECT r.id, $2::uuid, $3::uuid, r.phone_number, r.status::"ContactStatus", r.data, r.timezone, r.name, now(), now() FROM ${RECORDS}`;
/** Rows merged with a later duplicate after their chunk was written. */
const UPDATE_SQL = `UPDATE contacts SET data = r.data, name = r.name, timezone = r.timezone
  FROM ${RECORDS} WHERE contacts.id = r.id AND contacts.user_id = $2::uuid AND contacts.contact_group_id = $3::uuid`;

function readTable(input: z.output<typeof importInput>, maxRows: number): ParsedTable {
  const { csvData, csvText } = input;
  if (csvData !== undefined && csvText !== undefined) {
    throw ValidationError.field(NON_FIELD, 'Send either csvData or a file, not both.');
  }
  if (csvText !== undefined) {
    let table: ParsedTable;
    try {
      table = parseCsv(csvText, maxRows);
    } catch (error) {
      if (error instanceof NotCsvError) throw ValidationError.field('file', error.message);
      throw error;
    }
    if (table.rows.length > maxRows) throw tooMany('file', maxRows);
    return table;
  }
  if (csvData === undefined) throw ValidationError.field('csvData', 'This field is required.');
  if (csvData.length > maxRows) throw tooMany('csvData', maxRows);
  return tableFromRows(csvData);
}

const tooMany = (field: string, maxRows: number) =>
  ValidationError.field(field, `Ensure this import has no more than ${maxRows} rows.`);

/** Rows given as JSON objects: every value a string, number, boolean or null; headers in first-seen order. */
function tableFromRows(rows: unknown[]): ParsedTable {
  const headers = new Set<string>();
  const errors: FieldErrors = {};
  let errorCount = 0;
  const fail = (path: string, message: string) => {
    if (errorCount++ < MAX_ROW_ERRORS) (errors[path] ??= []).push(message);
  };
  rows.forEach((row, index) => {
    if (typeof row !== 'object' || row === null || Array.isArray(row)) {
      fail(`csvData.${index}`, `Expected a dictionary of items but got type "${Array.isArray(row) ? 'list' : row === null ? 'null' : typeof row}".`);
      return;
    }
    for (const [key, value] of Object.entries(row)) {
      if (value !== null && typeof value === 'object') fail(`csvData.${index}.${key}`, 'Expected a text, number or boolean value.');
      else if (key.trim()) headers.add(key);
    }
  });
  if (errorCount > 0) throw new ValidationError(errors);
  return { headers: [...headers], rows: rows as Record<string, unknown>[] };
}

function selectHeaders(headers: string[], selected: string[] | undefined): string[] {
  if (!selected || selected.length === 0) return headers;
  const unknown = selected.filter((h) => !headers.includes(h));
  if (unknown.length) throw ValidationError.field('selectedHeaders', `Unknown column(s): ${unknown.join(', ')}.`);
  return headers.filter((h) => selected.includes(h));
}
