import { z } from 'zod';
import type { SqlSession } from '../../db/sql.js';
import type { ServiceContext } from '../context.js';
import { defaultCountryOf } from '../users/store.js';
import { uuidv7 } from '../ids.js';
import { NON_FIELD, ValidationError, type FieldErrors } from '../errors.js';
import { toE164 } from '../phone.js';
import { UNKNOWN_TIME_ZONE } from '../time-zones.js';
import { listInPlace, parseInput, type RawInput } from '../validation.js';
import { NotCsvError, parseCsv, type ParsedTable } from './csv.js';
import { emitEvents } from '../webhooks/emit.js';
import { recordImportedConsents } from './consents.js';
import {
  canonicalData,
  CONSENT_FIELDS,
  hasPhoneColumn,
  mergeData,
  planColumns,
  readData,
  unknownTimeZoneColumn,
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

/**
 * Why a row did not become a contact the dialer will call: `duplicate` rows are merged into the first row
 * of their number and not imported; `invalid` and `do_not_call` rows are imported with that status and
 * never called.
 */
export type RefusalReason = 'invalid' | 'duplicate' | 'do_not_call';

export interface RefusedRow {
  /** 1 for the first row of data (the line after a CSV file's header). */
  row: number;
  /** The column as the import named it. */
  field: string;
  message: string;
  reason: RefusalReason;
}

export interface ImportResult {
  success: true;
  groupId: string;
  /** Contacts created: every row but duplicates, `invalid` and `do_not_call` ones included. */
  totalImported: number;
  totalInvalid: number;
  totalDuplicates: number;
  totalDoNotCall: number;
  /** The first MAX_REFUSED_ROWS refused rows, in row order; the totals count them all. */
  refusedRows: RefusedRow[];
}

const MAX_ROW_ERRORS = 10;
/** Refused rows an import result lists; enough to fix a file by, small enough for any answer. */
export const MAX_REFUSED_ROWS = 100;
/** The column the contacts table keeps a number in; longer junk stays only in `data`. */
const PHONE_COLUMN_LENGTH = 32;

interface Draft {
  id: string;
  /** Its row number (1 for the first row of data). */
  row: number;
  phone_number: string | null;
  status: 'active' | 'invalid' | 'do_not_call';
  data: ContactData;
}

type Row = Record<string, unknown>;
type ParsedImport = z.output<typeof importInput>;

export async function importContacts(ctx: ServiceContext, raw: ImportInput): Promise<ImportResult> {
  const input = parseInput(importInput, raw);
  const source = input.csv_text !== undefined ? 'file' : 'csv_data';
  const table = readTable(input, ctx.settings.importMaxRows);
  const columns = new Columns(input.selected_headers);
  columns.add(table.headers);
  columns.check(source, table.rows.length);
  return writeImport(ctx, input, source, columns, chunksOf(table.rows));
}

/**
 * Text of the rows of a JSON import read at a time while its body arrives (importArrivingRows): small
 * enough to stay out of V8's large-object space, whose garbage waits for a full collection.
 */
export const ARRIVING_BATCH_BYTES = 64 * 1024;

/**
 * A JSON import whose rows are read as the body arrives, in batches: the same import as importContacts
 * with the rows as `csv_data`, started before they have all arrived and without holding them all.
 * Answers undefined, having written nothing, when the rows cannot be imported as they come (a column that
 * first appears late would change what an earlier one means: "Name" once "First Name" appears); the caller
 * then imports them all at once. A refusal is thrown as importContacts would throw it, though not always
 * the same one: the caller decides the answer on the whole input.
 */
export async function importArrivingRows(
  ctx: ServiceContext,
  raw: ImportInput,
  batches: AsyncIterable<unknown[]>,
): Promise<ImportResult | undefined> {
  const input = parseInput(importInput, raw);
  const maxRows = ctx.settings.importMaxRows;
  const columns = new Columns(input.selected_headers);
  async function* rows() {
    let count = 0;
    for await (const batch of batches) {
      columns.add(readRows(batch, count));
      count += batch.length;
      if (count > maxRows) throw tooMany('csv_data', maxRows);
      yield batch as Row[];
    }
    columns.check('csv_data', count);
  }
  try {
    return await writeImport(ctx, input, 'csv_data', columns, rows());
  } catch (error) {
    if (error instanceof ColumnsChanged) return undefined;
    throw error;
  }
}

/** The rows of an import in memory, a chunk at a time; each row is let go once taken. */
function* chunksOf(rows: Row[]): Generator<Row[]> {
  for (let start = 0; start < rows.length; start += WRITE_ROWS) {
    const end = Math.min(start + WRITE_ROWS, rows.length);
    const chunk = rows.slice(start, end);
    rows.fill(EMPTY_ROW, start, end);
    yield chunk;
  }
}

/**
 * Rows handed to the COPY at a time. Their text (some 90 KB) stays small enough for the young generation,
 * so it is collected as soon as it is sent; a row whose number was already sent is a late duplicate.
 */
const WRITE_ROWS = 250;
const EMPTY_ROW: Row = {};

/**
 * Writes the import's group and its rows, which come in chunks, in one transaction; `columns` grows with
 * them. Rows it refuses (`source` names them) roll it all back.
 */
async function writeImport(
  ctx: ServiceContext,
  input: ParsedImport,
  source: string,
  columns: Columns,
  chunks: Iterable<Row[]> | AsyncIterable<Row[]>,
): Promise<ImportResult> {
  const country = input.default_country ?? (await defaultCountryOf(ctx.db, ctx.user.id));
  const book = new DraftBook();
  const groupId = uuidv7();
  await ctx.sql.transaction(async (tx) => {
    const now = await store.insertImportedGroup(tx, {
      id: groupId,
      userId: ctx.user.id,
      name: input.group_name,
      description: input.description,
    });
    // One COPY takes every contact while the rows are built: the database writes some rows while this
    // process builds the next, and waiting on write() keeps this process from running far ahead of it.
    // Numbers are read here, between writes (about a millisecond for 250 rows): worker threads cost an
    // import 15 to 60 MB at its peak and saved it no time, the database's side of the COPY being the slower.
    const copy = store.copyContacts(tx, ctx.user.id, groupId, now);
    const readNumber = (number: string) => toE164(number, country);
    const refused = new RowErrors(source);
    for await (const rows of chunks) {
      for (let start = 0; start < rows.length; start += WRITE_ROWS) {
        const end = Math.min(start + WRITE_ROWS, rows.length);
        const drafts = buildDrafts(rows, start, end, columns.plan, readNumber, book, refused);
        refused.rowsRead(end - start);
        // Once a row is refused nothing will be kept: the rest are only read for their errors.
        if (refused.any()) continue;
        const writing = copy.write(drafts.map(toImported));
        book.written();
        await writing;
      }
    }
    refused.throwIfAny();
    await copy.end();
    if (book.lateDuplicates.length) await mergeLateDuplicates(tx, book.lateDuplicates, ctx.user.id, groupId);
    // The file's numbers on the user's do-not-call list are looked up once the rows are in, and their
    // contacts marked: reading the whole list first cost time with its length (0.4 s for 80,000 numbers,
    // seconds for a list of a million), whatever the file's size.
    const listed = await store.listedAmong(tx, ctx.user.id, book.numbersToCall());
    await store.markNeverCalled(tx, groupId, listed);
    book.listed(listed);
    // Counted here rather than recounted (a recount visits 100,000 fresh rows: 0.2 s): no other transaction
    // can see the new group yet, so it holds exactly the rows written above.
    await store.finishImportedGroup(tx, groupId, { total: book.counts.imported, csvHeaders: columns.headers });
    if (columns.plan.some((c) => c.field in CONSENT_FIELDS)) await recordImportedConsents(tx, groupId, new Date(now));
    const { imported, invalid, duplicates, doNotCall } = book.counts;
    await emitEvents(tx, [
      {
        type: 'import.finished',
        userId: ctx.user.id,
        data: {
          contact_group_id: groupId,
          name: input.group_name,
          total_imported: imported,
          total_invalid: invalid,
          total_duplicates: duplicates,
          total_do_not_call: doNotCall,
        },
      },
    ]);
  });

  const { imported, invalid, duplicates, doNotCall } = book.counts;
  return {
    success: true,
    groupId,
    totalImported: imported,
    totalInvalid: invalid,
    totalDuplicates: duplicates,
    totalDoNotCall: doNotCall,
    refusedRows: book.refused,
  };
}

/** A column that arrives late would change what an earlier column means. */
class ColumnsChanged extends Error {}

/**
 * The columns an import keeps (all, or the selected ones), in the order they were first seen, and what
 * each means. Rows arriving in batches may bring new columns; one that changes what an earlier column means
 * throws ColumnsChanged, since rows already written read that column otherwise.
 */
class Columns {
  readonly headers: string[] = [];
  plan: ColumnPlan[] = [];
  private readonly seen = new Set<string>();

  constructor(private readonly selected: string[] | undefined) {}

  add(headers: string[]) {
    const kept = headers.filter((h) => !this.seen.has(h) && (!this.selected?.length || this.selected.includes(h)));
    for (const header of headers) this.seen.add(header);
    if (kept.length === 0) return;
    this.headers.push(...kept);
    const plan = planColumns(this.headers);
    if (this.plan.some((column, index) => plan[index]!.field !== column.field)) throw new ColumnsChanged();
    this.plan = plan;
  }

  /** Refuses columns no import can take: selected ones the rows lack, none for numbers; and no rows at all. */
  check(source: string, rowCount: number) {
    const unknown = this.selected?.filter((h) => !this.seen.has(h)) ?? [];
    if (unknown.length) throw ValidationError.field('selected_headers', `Unknown column(s): ${unknown.join(', ')}.`);
    if (rowCount === 0) throw ValidationError.field(source, 'There are no rows to import.');
    if (!hasPhoneColumn(this.plan)) {
      throw ValidationError.field(source, 'No column holds phone numbers: name one "Phone", "Phone Number" or "Mobile".');
    }
  }
}

/** The drafts of an import's rows, in order: rows that share a number merge into the first, which wins. */
class DraftBook {
  readonly counts = { imported: 0, invalid: 0, duplicates: 0, doNotCall: 0 };
  /** Rows whose number's first row was written before they came; merged into it at the end (rare). */
  readonly lateDuplicates: { phoneNumber: string; data: ContactData }[] = [];
  /** The first MAX_REFUSED_ROWS refused rows, in row order. */
  readonly refused: RefusedRow[] = [];
  /** Drafts not written yet, by number. */
  private readonly pending = new Map<string, Draft>();
  /**
   * Numbers already written, each with its row's number if it is to be called (0 if invalid). A late
   * duplicate finds its first row by number (one per group), so that 100,000 ids are not held through
   * the import; the do-not-call list's numbers among them are refused by row at the end.
   */
  private readonly writtenNumbers = new Map<string, number>();
  /** The column numbers come from (one for the import). */
  private phoneColumn = 'phone_number';

  /**
   * The draft of row number `row`, or undefined when the row merged into an earlier row of its number.
   * `phoneColumn` names the column its number came from, for the reason it is refused.
   */
  add(row: number, phoneColumn: string, data: ContactData, e164: string | null): Draft | undefined {
    const given = data.phone_number ?? '';
    const key = e164 ?? (given ? given.slice(0, PHONE_COLUMN_LENGTH) : null);
    if (key) {
      const earlier = this.pending.get(key);
      const late = !earlier && this.writtenNumbers.has(key);
      if (earlier || late) {
        // Later rows fill in what the first left blank.
        if (earlier) earlier.data = mergeData(data, earlier.data);
        else this.lateDuplicates.push({ phoneNumber: key, data });
        this.counts.duplicates += 1;
        this.refuse(row, phoneColumn, 'duplicate', `Same number as ${earlier ? `row ${earlier.row}` : 'an earlier row'}; merged into it.`);
        return undefined;
      }
    }
    this.phoneColumn = phoneColumn;
    const status = e164 ? 'active' : 'invalid';
    const draft: Draft = { id: uuidv7(), row, phone_number: key, status, data };
    if (key) this.pending.set(key, draft);
    this.counts.imported += 1;
    if (status === 'invalid') {
      this.counts.invalid += 1;
      const message = given ? `"${given}" is not a valid phone number` : 'No phone number';
      this.refuse(row, phoneColumn, 'invalid', `${message}; imported as invalid and never called.`);
    }
    return draft;
  }

  private refuse(row: number, field: string, reason: RefusalReason, message: string) {
    if (this.refused.length < MAX_REFUSED_ROWS) this.refused.push({ row, field, message, reason });
  }

  /** The pending drafts are written as they stand: later rows of their numbers are late duplicates. */
  written() {
    for (const [number, draft] of this.pending) this.writtenNumbers.set(number, draft.status === 'active' ? draft.row : 0);
    this.pending.clear();
  }

  /** The valid numbers written, each once. */
  numbersToCall(): string[] {
    return [...this.writtenNumbers].filter(([, row]) => row > 0).map(([number]) => number);
  }

  /** These written numbers are on the do-not-call list: their contacts were imported as never to be called. */
  listed(numbers: readonly string[]) {
    this.counts.doNotCall += numbers.length;
    const rows = numbers.map((number) => this.writtenNumbers.get(number)!).sort((a, b) => a - b);
    const message = 'The number is on your do-not-call list; imported and never called.';
    // The first refusals of each kind, merged: the first MAX_REFUSED_ROWS of all, in row order.
    for (const row of rows.slice(0, MAX_REFUSED_ROWS)) this.refused.push({ row, field: this.phoneColumn, message, reason: 'do_not_call' });
    this.refused.sort((a, b) => a.row - b.row).splice(MAX_REFUSED_ROWS);
  }
}

/**
 * Rows refused for a value no contact may keep (a time zone that is none), named as
 * `<source>.<row index>.<column>`; the first MAX_ROW_ERRORS are enough to refuse the import.
 */
class RowErrors {
  private readonly errors: FieldErrors = {};
  private count = 0;
  /** Rows read before those being built. */
  private offset = 0;

  constructor(private readonly source: string) {}

  add(index: number, column: string, message: string) {
    (this.errors[`${this.source}.${this.offset + index}.${column}`] ??= []).push(message);
    this.count += 1;
    if (this.count >= MAX_ROW_ERRORS) this.throwIfAny();
  }

  rowsRead(count: number) {
    this.offset += count;
  }

  /** The row number (1 for the first) of the row at `index` among those being built. */
  rowNumber(index: number) {
    return this.offset + index + 1;
  }

  any() {
    return this.count > 0;
  }

  throwIfAny() {
    if (this.count > 0) throw new ValidationError(this.errors);
  }
}

/** The drafts of rows [start, end); each source row is let go once read. */
function buildDrafts(
  rows: Row[],
  start: number,
  end: number,
  plan: ColumnPlan[],
  readNumber: NumberReader,
  book: DraftBook,
  refused: RowErrors,
) {
  const drafts: Draft[] = [];
  const phoneColumn = plan.find((column) => column.field === 'phone_number')?.header ?? 'phone_number';
  for (let index = start; index < end; index += 1) {
    const data = canonicalData(plan, rows[index]!, readNumber);
    rows[index] = EMPTY_ROW;
    const badZone = unknownTimeZoneColumn(plan, data);
    if (badZone !== null) refused.add(index - start, badZone, UNKNOWN_TIME_ZONE);
    const row = refused.rowNumber(index - start);
    const draft = book.add(row, phoneColumn, data, data.phone_number ? readNumber(data.phone_number) : null);
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

async function mergeLateDuplicates(
  tx: SqlSession,
  duplicates: { phoneNumber: string; data: ContactData }[],
  userId: string,
  groupId: string,
) {
  const rows = await store.contactsByNumbers(tx, groupId, [...new Set(duplicates.map((d) => d.phoneNumber))]);
  const merged = new Map(rows.map((r) => [r.phoneNumber, { id: r.id, data: readData(r.data) }]));
  for (const { phoneNumber, data } of duplicates) {
    const first = merged.get(phoneNumber)!;
    first.data = mergeData(data, first.data);
  }
  await store.rewriteGroupContacts(
    tx,
    userId,
    groupId,
    [...merged.values()].map(({ id, data }) => ({ id, ...withColumns(data) })),
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
  return { headers: readRows(rows, 0), rows: rows as Row[] };
}

/**
 * Checks rows given as JSON objects, `offset` being the first one's index, and answers their headers in
 * first-seen order; a ValidationError names the first rows that are not objects of plain values.
 */
function readRows(rows: unknown[], offset: number): string[] {
  const headers = new Set<string>();
  const errors: FieldErrors = {};
  let errorCount = 0;
  const fail = (path: string, message: string) => {
    if (errorCount++ < MAX_ROW_ERRORS) (errors[path] ??= []).push(message);
  };
  rows.forEach((row, at) => {
    const index = offset + at;
    if (typeof row !== 'object' || row === null || Array.isArray(row)) {
      fail(
        `csv_data.${index}`,
        `Expected a dictionary of items but got type "${Array.isArray(row) ? 'list' : row === null ? 'null' : typeof row}".`,
      );
      return;
    }
    for (const key of Object.keys(row)) {
      const value = (row as Row)[key];
      if (value !== null && typeof value === 'object') fail(`csv_data.${index}.${key}`, 'Expected a text, number or boolean value.');
      else if (key.trim()) headers.add(key);
    }
  });
  if (errorCount > 0) throw new ValidationError(errors);
  return [...headers];
}
