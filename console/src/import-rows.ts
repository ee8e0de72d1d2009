import Papa from 'papaparse';

// A CSV file read in the browser, its columns mapped to contact fields and each row checked before
// anything is sent: the rows with a problem are listed with their row number and left out of the import.

export const FIELDS = [
  ['phone_number', 'Phone number'],
  ['first_name', 'First name'],
  ['last_name', 'Last name'],
  ['full_name', 'Full name'],
  ['email', 'Email'],
  ['timezone', 'Time zone'],
  ['region', 'Region'],
  ['custom', 'Custom field (as named)'],
  ['skip', 'Leave out'],
] as const;
export type Field = (typeof FIELDS)[number][0];

/** Header names as the service also recognises them, letters and digits only, lower case. */
const GUESSES: Record<string, Field> = {
  phone: 'phone_number',
  phonenumber: 'phone_number',
  mobile: 'phone_number',
  cell: 'phone_number',
  telephone: 'phone_number',
  tel: 'phone_number',
  number: 'phone_number',
  firstname: 'first_name',
  first: 'first_name',
  givenname: 'first_name',
  lastname: 'last_name',
  last: 'last_name',
  surname: 'last_name',
  name: 'full_name',
  fullname: 'full_name',
  email: 'email',
  emailaddress: 'email',
  timezone: 'timezone',
  tz: 'timezone',
  region: 'region',
};

export const guessField = (header: string): Field => GUESSES[header.toLowerCase().replace(/[^a-z0-9]/g, '')] ?? 'custom';

export interface Table {
  headers: string[];
  rows: Record<string, string>[];
}

export function readCsv(text: string): Table {
  const parsed = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: 'greedy', transformHeader: (h) => h.trim() });
  return { headers: parsed.meta.fields ?? [], rows: parsed.data };
}

export interface RowProblem {
  /** The row's number in the file, counting from 1 after the header line. */
  row: number;
  field: string;
  message: string;
}

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

function knownZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function problemsOf(field: Field, value: string): string | null {
  switch (field) {
    case 'phone_number': {
      if (!value) return 'No phone number.';
      const digits = value.replace(/\D/g, '');
      if (/[a-z]/i.test(value) || digits.length < 7 || digits.length > 15) return `"${value}" is not a phone number.`;
      return null;
    }
    case 'email':
      return value && !EMAIL.test(value) ? `"${value}" is not an email address.` : null;
    case 'timezone':
      return value && !knownZone(value) ? `"${value}" is not a time zone (like America/New_York).` : null;
    default:
      return null;
  }
}

export interface Checked {
  /** The rows to send, keyed by contact field (custom fields by their header). */
  rows: Record<string, string>[];
  /** Each sent row's number in the file, to name a row the server refuses. */
  rowNumbers: number[];
  problems: RowProblem[];
}

export function checkRows(table: Table, mapping: Record<string, Field>): Checked {
  const result: Checked = { rows: [], rowNumbers: [], problems: [] };
  table.rows.forEach((source, index) => {
    const row: Record<string, string> = {};
    const problems: RowProblem[] = [];
    for (const header of table.headers) {
      const field = mapping[header] ?? 'custom';
      if (field === 'skip') continue;
      const value = (source[header] ?? '').trim();
      const problem = problemsOf(field, value);
      if (problem) problems.push({ row: index + 1, field: field === 'custom' ? header : field, message: problem });
      if (value) row[field === 'custom' ? header : field] = value;
    }
    if (problems.length) result.problems.push(...problems);
    else {
      result.rows.push(row);
      result.rowNumbers.push(index + 1);
    }
  });
  return result;
}

/** The server's refusals of single rows (`rows.<index>.<column>`), as problems of the file's rows. */
export function serverProblems(fieldErrors: Record<string, string[]>, rowNumbers: number[]): RowProblem[] {
  return Object.entries(fieldErrors).flatMap(([key, messages]) => {
    const match = /(?:^|\.)(?:rows|csv_data)\.(\d+)\.(.+)$/.exec(key);
    const row = match ? rowNumbers[Number(match[1])] : undefined;
    return messages.map((message) => ({ row: row ?? 0, field: match ? match[2]! : key, message }));
  });
}
