import { z } from 'zod';
import type { SqlSession } from '../../db/sql.js';
import type { ServiceContext } from '../context.js';
import { defaultCountryOf } from '../users/store.js';
import { uuidv7 } from '../ids.js';
import { NON_FIELD, ValidationError, type FieldErrors } from '../errors.js';
import { toE164Batch } from '../phone-pool.js';
import { listInPlace, parseInput, type RawInput } from '../validation.js';
import { NotCsvError, parseCsv, type ParsedTable } from './csv.js';
import { doNotCallSet } from './do-not-call.js';
import {
  canonicalData,
  hasPhoneColumn,
  mergeData,
  numbersOf,
  planColumns,
  readData,
  withColumns,
  type ColumnPlan,
  type ContactData,
  type NumberReader,
} from './fields.js';
import * as store from './store.js';

// Importing creates a contact group from rows (JSON) or a CSV file, all or nothing.

export const importInput = z.object({
  group_name: z.string().trim().min(1).max(255),
  description: z.string().max(10_000).default(''),
  /** Rows as objects; the import empties this list as it reads it, so that big imports let go of their rows early. */
  csv_data: listInPlace.optional(),
  /** The text of an uploaded CSV file. */
  csv_text: z.string().optional(),
  selected_headers: z.array(z.string().trim().min(1).max(255)).optional(),
  /** ISO country for numbers written without a country code; the user's default (US) otherwise. */
  default_country: z
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
}

export async function importContacts(ctx: ServiceContext, raw: ImportInput): Promise<ImportResult> {
  const input = parseInput(importInput, raw);
  const source = input.csv_text !== undefined ? 'file' : 'csv_data';
  const table = readTable(input, ctx.settings.importMaxRows);
  const headers = selectHeaders(table.headers, input.selected_headers);
  const plan = planColumns(headers);
  const rows = table.rows;
  if (rows.length === 0) throw ValidationError.field(source, 'There are no rows to import.');
  if (!hasPhoneColumn(plan)) {
    throw ValidationError.field(source, 'No column holds phone numbers: name one "Phone", "Phone Number" or "Mobile".');
  }

  const userCountry = await defaultCountryOf(ctx.db, ctx.user.id);
  const country = input.default_country ?? userCountry;
  const book = new DraftBook(await doNotCallSet(ctx.sql, ctx.user.id));

  // The phone pool reads the numbers of a few chunks ahead of the one being built, so that they are ready
  // when it is, without holding every chunk's numbers at once.
  const chunkCount = Math.ceil(rows.length / CHUNK_ROWS);
  const chunkEnd = (chunkIndex: number) => Math.min((chunkIndex + 1) * CHUNK_ROWS, rows.length);
  const readChunk = (chunkIndex: number) => {
    const numbers: string[] = [];
    for (let index = chunkIndex * CHUNK_ROWS; index < chunkEnd(chunkIndex); index += 1) numbers.push(...numbersOf(plan, rows[index]!));
    const reading = readNumbers(numbers, country);
    // Awaited in turn below; this keeps one that fails while an earlier chunk is written (or after the
    // transaction failed) from counting as unhandled.
    reading.catch(() => {});
    return reading;
  };
  const readings = Array.from({ length: Math.min(READ_AHEAD, chunkCount) }, (_, chunkIndex) => readChunk(chunkIndex));

  const groupId = uuidv7();
  await ctx.sql.transaction(async (tx) => {
    const now = await store.insertImportedGroup(tx, {
      id: groupId,
      userId: ctx.user.id,
      name: input.group_name,
      description: input.description,
      csvHeaders: headers,
    });
    // One COPY takes every contact while the rows are built: the database writes some rows while this
    // process builds the next, and waiting on write() keeps this process from running far ahead of it.
    const copy = store.copyContacts(tx, ctx.user.id, groupId, now);
    for (let chunkIndex = 0; chunkIndex < chunkCount; chunkIndex += 1) {
      if (chunkIndex + READ_AHEAD < chunkCount) readings.push(readChunk(chunkIndex + READ_AHEAD));
      const read = await readings.shift()!;
      const readNumber = (number: string) => read.get(number) ?? null;
      for (let start = chunkIndex * CHUNK_ROWS; start < chunkEnd(chunkIndex); start += WRITE_ROWS) {
        const drafts = buildDrafts(rows, start, Math.min(start + WRITE_ROWS, chunkEnd(chunkIndex)), plan, readNumber, book);
        const writing = copy.write(drafts.map(toImported));
        book.written(drafts);
        await writing;
      }
    }
    await copy.end();
    if (book.lateDuplicates.length) await mergeLateDuplicates(tx, book.lateDuplicates, ctx.user.id, groupId);
    // Counted here rather than recounted (a recount visits 100,000 fresh rows: 0.2 s): no other transaction
    // can see the new group yet, so it holds exactly the rows written above.
    await store.setGroupTotal(tx, groupId, book.counts.imported);
  });

  const { imported, invalid, duplicates, doNotCall } = book.counts;
  return { success: true, groupId, totalImported: imported, totalInvalid: invalid, totalDuplicates: duplicates, totalDoNotCall: doNotCall };
}

/** Rows whose numbers go to the phone pool as one batch. */
const CHUNK_ROWS = 5_000;
const READ_AHEAD = 2;
/**
 * Rows handed to the COPY at a time. Their text (some 90 KB) stays small enough for the young generation,
 * so it is collected as soon as it is sent; a row whose number was already sent is a late duplicate.
 */
const WRITE_ROWS = 250;
const EMPTY_ROW: Record<string, unknown> = {};

async function readNumbers(numbers: string[], country: string): Promise<Map<string, string | null>> {
  const e164 = await toE164Batch(numbers, country);
  return new Map(numbers.map((number, index) => [number, e164[index]!]));
}

/** The drafts of an import's rows, in order: rows that share a number merge into the first, which wins. */
class DraftBook {
  readonly counts = { imported: 0, invalid: 0, duplicates: 0, doNotCall: 0 };
  /** Rows whose number's first row was written before they came; merged into it at the end (rare). */
  readonly lateDuplicates: { id: string; data: ContactData }[] = [];
  /** A number maps to its draft until that is written, then only to its id, so that memory does not grow with the import. */
  private readonly byNumber = new Map<string, Draft | string>();

  constructor(private readonly blocked: Set<string>) {}

  /** The draft of a row, or undefined when the row merged into an earlier row of its number. */
  add(data: ContactData, e164: string | null): Draft | undefined {
    const given = data.phone_number ?? '';
    const key = e164 ?? (given ? given.slice(0, PHONE_COLUMN_LENGTH) : null);
    const earlier = key ? this.byNumber.get(key) : undefined;
    if (earlier) {
      // Later rows fill in what the first left blank.
      if (typeof earlier === 'string') this.lateDuplicates.push({ id: earlier, data });
      else earlier.data = mergeData(data, earlier.data);
      this.counts.duplicates += 1;
      return undefined;
    }
    const status = !e164 ? 'invalid' : this.blocked.has(e164) ? 'do_not_call' : 'active';
    const draft: Draft = { id: uuidv7(), phone_number: key, status, data };
    if (key) this.byNumber.set(key, draft);
    this.counts.imported += 1;
    if (status === 'invalid') this.counts.invalid += 1;
    if (status === 'do_not_call') this.counts.doNotCall += 1;
    return draft;
  }

  /** The drafts are written as they stand: later rows of their numbers are late duplicates. */
  written(drafts: Draft[]) {
    for (const draft of drafts) if (draft.phone_number) this.byNumber.set(draft.phone_number, draft.id);
  }
}

/** The drafts of rows [start, end); each source row is let go once read. */
function buildDrafts(
  rows: Record<string, unknown>[],
  start: number,
  end: number,
  plan: ColumnPlan[],
  readNumber: NumberReader,
  book: DraftBook,
) {
  const drafts: Draft[] = [];
  for (let index = start; index < end; index += 1) {
    const data = canonicalData(plan, rows[index]!, readNumber);
    rows[index] = EMPTY_ROW;
    const draft = book.add(data, data.phone_number ? readNumber(data.phone_number) : null);
    if (draft) drafts.push(draft);
  }
  return drafts;
}

/** A draft as the store writes it. */
const toImported = ({ id, phone_number, status, data }: Draft): store.ImportedContact => ({
  id,
  phoneNumber: phone_number,
  status,
  ...withColumns(data),
});

async function mergeLateDuplicates(tx: SqlSession, duplicates: { id: string; data: ContactData }[], userId: string, groupId: string) {
  const rows = await store.contactData(tx, [...new Set(duplicates.map((d) => d.id))]);
  const merged = new Map(rows.map((r) => [r.id, readData(r.data)]));
  for (const { id, data } of duplicates) merged.set(id, mergeData(data, merged.get(id)!));
  await store.rewriteGroupContacts(
    tx,
    userId,
    groupId,
    [...merged].map(([id, data]) => ({ id, ...withColumns(data) })),
  );
}

function readTable(input: z.output<typeof importInput>, maxRows: number): ParsedTable {
  const { csv_data: csvData, csv_text: csvText } = input;
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
  if (csvData === undefined) throw ValidationError.field('csv_data', 'This field is required.');
  if (csvData.length > maxRows) throw tooMany('csv_data', maxRows);
  return tableFromRows(csvData);
}

const tooMany = (field: string, maxRows: number) => ValidationError.field(field, `Ensure this import has no more than ${maxRows} rows.`);

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
      fail(
        `csv_data.${index}`,
        `Expected a dictionary of items but got type "${Array.isArray(row) ? 'list' : row === null ? 'null' : typeof row}".`,
      );
      return;
    }
    for (const [key, value] of Object.entries(row)) {
      if (value !== null && typeof value === 'object') fail(`csv_data.${index}.${key}`, 'Expected a text, number or boolean value.');
      else if (key.trim()) headers.add(key);
    }
  });
  if (errorCount > 0) throw new ValidationError(errors);
  return { headers: [...headers], rows: rows as Record<string, unknown>[] };
}

function selectHeaders(headers: string[], selected: string[] | undefined): string[] {
  if (!selected || selected.length === 0) return headers;
  const unknown = selected.filter((h) => !headers.includes(h));
  if (unknown.length) throw ValidationError.field('selected_headers', `Unknown column(s): ${unknown.join(', ')}.`);
  return headers.filter((h) => selected.includes(h));
}
