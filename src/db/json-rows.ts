// Reads whose rows PostgreSQL builds as JSON objects (json_build_object), relations included, a list as
// one array (json_agg): node-postgres then parses one value instead of converting a column each, which
// on the lists clients poll costs several times less.

/**
 * SQL for a timestamptz as `Date#toISOString` prints it (UTC, milliseconds, `Z`; the stored instants are
 * in years 0001 to 9999 and have milliseconds at most). Read as that text, an instant that is only shown
 * is not parsed into a Date to be printed again.
 */
export const isoText = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A Prisma shape as such a statement builds it: its instants as `isoText`, at any depth. */
export type IsoInstants<T> = T extends Date
  ? string
  : T extends readonly (infer E)[]
    ? IsoInstants<E>[]
    : T extends object
      ? { [K in keyof T]: IsoInstants<T[K]> }
      : T;

// Reads whose statement builds the answer's JSON text itself, byte for byte as JSON.stringify would print
// the parsed rows, so that node writes it out without parsing or printing it. Objects are concatenated
// (json_build_object writes `"a" : 1`); strings are escaped by to_json, which escapes as JSON.stringify does.
// What only node can print the same is left in the text as a piece between two U+0001 characters, which
// never stand raw in JSON text (both escape every control character): a letter naming the printer, then
// the stored value's JSON text. `fillPieces` prints them.

/** SQL literal of a text. */
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** SQL for the JSON text of a string, uuid or enum value (null as `null`). */
export const stringJson = (expression: string) => `coalesce(to_json(${expression})::text, 'null')`;
/** SQL for the JSON text of an integer or boolean (null as `null`). */
export const plainJson = (expression: string) => `coalesce(${expression}::text, 'null')`;
/** SQL for the JSON text of an instant as `Date#toISOString` prints it (null as `null`). */
export const instantJson = (column: string) => `coalesce('"' || ${isoText(column)} || '"', 'null')`;

/** SQL for an object's JSON text from its keys, in order, and the SQL of each value's JSON text. */
export function objectJson(entries: [key: string, json: string][]): string {
  return entries.map(([key, json], i) => `${literal(`${i ? ',' : '{'}${JSON.stringify(key)}:`)} || ${json}`).join(' || ') + ` || '}'`;
}

const PIECE = '\u0001';
/** The printer of stored JSON whose shape the contract leaves open: as JSON.stringify prints it parsed. */
const OPEN_JSON = 'j';

/** SQL for a piece node prints: the stored JSON (a json or jsonb value) handed to the printer named `printer` (one letter). */
export const printedPiece = (printer: string, json: string) => `chr(1) || ${literal(printer)} || ${json}::text || chr(1)`;

/** SQL for a stored JSON value of open shape (never null), printed as JSON.stringify prints it parsed. */
export const openJson = (json: string) => printedPiece(OPEN_JSON, json);

/**
 * Open values are few per customer (`{}`, `[]`, a few mappings), so their printed text is remembered by
 * their stored text, the short ones only, in a table that starts over when full.
 */
const printedOpen = new Map<string, string>();
const REMEMBERED_LENGTH = 2_048;

function printOpen(stored: string): string {
  let printed = printedOpen.get(stored);
  if (printed === undefined) {
    printed = JSON.stringify(JSON.parse(stored));
    if (stored.length <= REMEMBERED_LENGTH) {
      if (printedOpen.size >= 1_000) printedOpen.clear();
      printedOpen.set(stored, printed);
    }
  }
  return printed;
}

/** The JSON text such a statement built, its pieces printed: open JSON, and the others by `printers` (by letter). */
export function fillPieces(text: string, printers: Record<string, (stored: string) => string>): string {
  if (!text.includes(PIECE)) return text;
  const parts = text.split(PIECE);
  for (let i = 1; i < parts.length; i += 2) {
    const part = parts[i]!;
    const printer = part[0] === OPEN_JSON ? printOpen : printers[part[0]!];
    if (!printer) throw new Error(`No printer for JSON pieces marked ${part[0]}`);
    parts[i] = printer(part.slice(1));
  }
  return parts.join('');
}
