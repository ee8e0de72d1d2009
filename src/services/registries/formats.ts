import type { DoNotCallRegistry } from '../../generated/prisma/enums.js';

// The lines of a registry's download file, read one at a time: a file of tens of millions of lines is
// never held whole. Each valid line becomes the number's E.164 digits (no "+"), as COPY's text for the
// bigint column, and the prefix it counts under (a NANP area code, a UK number's first digits).

/** A line read: the number's E.164 digits and its prefix; `blank` for an empty line; null when it is not a number of this registry. */
export type ParsedLine = { digits: string; prefix: string } | 'blank' | null;

/** What each registry's file holds, for error messages. */
export const LINE_FORMATS: Record<DoNotCallRegistry, string> = {
  us_dnc: 'a 10-digit US number (area code and number, e.g. 2025550123 or 202,5550123)',
  ca_dncl: 'a 10-digit Canadian number (area code and number, e.g. 4165550123 or 416,5550123)',
  uk_tps: 'a UK number in national format starting with 0 (e.g. 02079460000)',
  uk_ctps: 'a UK number in national format starting with 0 (e.g. 02079460000)',
};

const isDigit = (code: number) => code >= 48 && code <= 57;

/** Digits only, from `start` to `end`. */
function allDigits(line: string, start: number, end: number): boolean {
  for (let i = start; i < end; i += 1) if (!isDigit(line.charCodeAt(i))) return false;
  return true;
}

/**
 * NANP: ten digits, or the FTC's "area code,number"; the area code and the exchange start with 2 to 9
 * (NANP numbering plan), so a line such as 1202555012 (a country code glued on) is refused.
 */
function nanpLine(line: string): ParsedLine {
  let digits: string;
  if (line.length === 10 && allDigits(line, 0, 10)) digits = line;
  else if (line.length === 11 && line.charCodeAt(3) === 44 && allDigits(line, 0, 3) && allDigits(line, 4, 11)) {
    digits = line.slice(0, 3) + line.slice(4);
  } else return null;
  if (digits.charCodeAt(0) < 50 || digits.charCodeAt(3) < 50) return null;
  return { digits: `1${digits}`, prefix: digits.slice(0, 3) };
}

/** UK: 0 and the national significant number, 9 or 10 digits, whose first digit is not 0. */
function ukLine(line: string): ParsedLine {
  if ((line.length !== 10 && line.length !== 11) || line.charCodeAt(0) !== 48 || line.charCodeAt(1) === 48) return null;
  if (!allDigits(line, 1, line.length)) return null;
  return { digits: `44${line.slice(1)}`, prefix: line.slice(0, 3) };
}

const READERS: Record<DoNotCallRegistry, (line: string) => ParsedLine> = {
  us_dnc: nanpLine,
  ca_dncl: nanpLine,
  uk_tps: ukLine,
  uk_ctps: ukLine,
};

/** One line of a registry's file; surrounding spaces (and a Windows line end) do not count. */
export function parseLine(registry: DoNotCallRegistry, raw: string): ParsedLine {
  const line = raw.trim();
  return line === '' ? 'blank' : READERS[registry](line);
}

/** Cuts a stream of text into lines, chunk by chunk; a line cut across two chunks is kept until its end comes. */
export class LineSplitter {
  private rest = '';

  /** The whole lines the chunk ends (without their line ends). */
  push(chunk: string): string[] {
    const lines = (this.rest + chunk).split('\n');
    this.rest = lines.pop()!;
    return lines;
  }

  /** The last line, when the file does not end with a line end. */
  end(): string[] {
    return this.rest === '' ? [] : [this.rest];
  }
}
