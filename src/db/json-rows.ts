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
