import Papa from 'papaparse';

// CSV files as people export them: quoted fields with commas and newlines, a byte-order mark, CRLF line
// ends, and comma, semicolon or tab delimiters (detected from the file).

export interface ParsedTable {
  headers: string[];
  /** Values are strings from a file; numbers and booleans too when the rows came as JSON. */
  rows: Record<string, unknown>[];
}

export class NotCsvError extends Error {}

const DELIMITERS = [',', ';', '\t', '|'];

export function parseCsv(text: string, maxRows: number): ParsedTable {
  if (looksBinary(text)) throw new NotCsvError('Upload a CSV file (comma, semicolon or tab separated text).');
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const result = Papa.parse<Record<string, string>>(body, {
    header: true,
    skipEmptyLines: 'greedy',
    delimitersToGuess: DELIMITERS,
    // One row past the limit is enough to know the file is too long.
    preview: maxRows + 1,
    transformHeader: (h) => h.trim(),
  });
  const headers = (result.meta.fields ?? []).filter((h) => h !== '');
  if (headers.length === 0) throw new NotCsvError('The file has no header row.');
  const fatal = result.errors.find((e) => e.type === 'Quotes');
  if (fatal) throw new NotCsvError(`The file is not valid CSV: ${fatal.message} (row ${fatal.row ?? '?'}).`);
  return { headers, rows: result.data };
}

/** Spreadsheets, images and other binaries carry NUL bytes or a zip signature; text files do not. */
function looksBinary(text: string): boolean {
  return text.startsWith('PK\u0003\u0004') || text.includes('\u0000') || text.slice(0, 8192).includes('\ufffd');
}
