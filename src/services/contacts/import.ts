import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { NON_FIELD, ValidationError, type FieldErrors } from '../errors.js';
import { toE164 } from '../phone.js';
import { parseInput, type RawInput } from '../validation.js';
import { NotCsvError, parseCsv, type ParsedTable } from './csv.js';
import { doNotCallSet } from './do-not-call.js';
import { canonicalData, displayName, hasPhoneColumn, isTimeZone, mergeData, planColumns, type ContactData } from './fields.js';
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

  const drafts: Draft[] = [];
  const byNumber = new Map<string, Draft>();
  let duplicates = 0;
  for (const row of table.rows) {
    const data = canonicalData(plan, row, country);
    const given = data.phone_number ?? '';
    const e164 = given ? toE164(given, country) : null;
    const key = e164 ?? (given ? given.slice(0, PHONE_COLUMN_LENGTH) : null);
    const earlier = key ? byNumber.get(key) : undefined;
    if (earlier) {
      // The first row of a number wins; later rows fill in what it left blank.
      earlier.data = mergeData(data, earlier.data);
      duplicates += 1;
      continue;
    }
    const draft: Draft = {
      id: uuidv7(),
      phone_number: key,
      status: !e164 ? 'invalid' : blocked.has(e164) ? 'do_not_call' : 'active',
      data,
      timezone: data.timezone && isTimeZone(data.timezone) ? data.timezone : null,
    };
    drafts.push(draft);
    if (key) byNumber.set(key, draft);
  }

  const groupId = await ctx.db.$transaction(
    async (tx) => {
      const group = await tx.contactGroup.create({
        data: { userId: ctx.user.id, name: input.groupName, description: input.description, csvHeaders: headers },
        select: { id: true },
      });
      const records = drafts.map((d) => ({ ...d, name: displayName(d.data) }));
      // One statement for the whole file: rows travel as one JSON document.
      await tx.$executeRawUnsafe(
        `INSERT INTO contacts (id, user_id, contact_group_id, phone_number, status, data, timezone, name, created_at, updated_at)
         SELECT r.id, $2::uuid, $3::uuid, r.phone_number, r.status::"ContactStatus", r.data, r.timezone, r.name, now(), now()
         FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, phone_number text, status text, data jsonb, timezone text, name text)`,
        JSON.stringify(records),
        ctx.user.id,
        group.id,
      );
      await refreshTotals(tx, [group.id]);
      return group.id;
    },
    { timeout: 120_000, maxWait: 10_000 },
  );

  return {
    success: true,
    groupId,
    totalImported: drafts.length,
    totalInvalid: drafts.filter((d) => d.status === 'invalid').length,
    totalDuplicates: duplicates,
    totalDoNotCall: drafts.filter((d) => d.status === 'do_not_call').length,
  };
}

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
  const out: Record<string, string>[] = [];
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
    const values: Record<string, string> = {};
    for (const [key, value] of Object.entries(row)) {
      const header = key.trim();
      if (!header) continue;
      if (value !== null && typeof value === 'object') {
        fail(`csvData.${index}.${header}`, 'Expected a text, number or boolean value.');
        continue;
      }
      headers.add(header);
      values[header] = value === null || value === undefined ? '' : String(value);
    }
    out.push(values);
  });
  if (errorCount > 0) throw new ValidationError(errors);
  return { headers: [...headers], rows: out };
}

function selectHeaders(headers: string[], selected: string[] | undefined): string[] {
  if (!selected || selected.length === 0) return headers;
  const unknown = selected.filter((h) => !headers.includes(h));
  if (unknown.length) throw ValidationError.field('selectedHeaders', `Unknown column(s): ${unknown.join(', ')}.`);
  return headers.filter((h) => selected.includes(h));
}
