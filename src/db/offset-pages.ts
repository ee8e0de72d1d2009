import { statement, type SqlSession } from './sql.js';

// The two reads of a v1 page at a deep offset of a list ordered newest first by (created_at, id), for
// the continuation rule of src/services/offset-pages.ts: the page skipped to from the top, and the page
// continued from a key remembered at an earlier page. Each is one statement, so what it counts and the
// page it cuts come from one snapshot.

/** A row's place in the list. */
export interface ListKey {
  id: string;
  createdAt: Date;
}

/** Where a page continues from: the key of the row at `settled + recent - 1`, counted when it was read. */
export interface ListMark {
  key: ListKey;
  /** The list's rows at or before the key in its order that are older than `settledBefore`. */
  settled: number;
  settledBefore: Date;
}

export interface SkippedPage {
  rows: ListKey[];
  /** Rows of the list created at or after the bound given (all of them ahead of an older key). */
  recent: number;
}

export interface ContinuedPage extends SkippedPage {
  /** The asked offset's distance before the mark's row as the list is now: past `maxShift` either way, no rows are read. */
  shift: number;
}

/** Where a continued page is cut, and how far from the mark's row (ms either way) its rows are looked for first. */
export interface PageAt {
  offset: number;
  limit: number;
  maxShift: number;
  windowMs: number;
}

/**
 * How far a row's UUIDv7 id may be made from its `created_at`, either way: the service drafts both in one
 * request (the dialer's tick, the ledger's move), so milliseconds; a day leaves room for a clock stepped.
 */
export const ID_TIME_MARGIN_MS = 24 * 3600 * 1000;

/**
 * A list of `table` selected by `where` (its parameters $1 to $`params`), read through an index on its
 * scope then `(created_at DESC, id)`.
 */
export interface NewestFirstList {
  name: string;
  table: string;
  where: string;
  params: number;
  /**
   * The table is partitioned by month of its UUIDv7 id (made within ID_TIME_MARGIN_MS of `created_at`):
   * the reads bound the id as well, so that PostgreSQL plans and opens only the months they can read.
   */
  partitionedByIdTime?: boolean;
}

export interface OffsetPageReads {
  skip(sql: SqlSession, values: unknown[], settledBefore: Date, offset: number, limit: number): Promise<SkippedPage>;
  continued(sql: SqlSession, values: unknown[], mark: ListMark, settledBefore: Date, at: PageAt): Promise<ContinuedPage>;
}

const ORDER = 'created_at DESC, id DESC';

export function offsetPageReads(list: NewestFirstList): OffsetPageReads {
  const { table, where } = list;
  const $ = (n: number) => `$${list.params + n}`;
  const byId = list.partitionedByIdTime === true;
  // The id's bound that `created_at >= x` implies, given as x less the margin: the months before it are not planned.
  const idFrom = (n: number) => (byId ? ` AND id >= uuidv7_floor(${$(n)}::timestamptz)` : '');
  // The skipped entries come from the index alone (created_at and id are in it); the count beside the
  // page is an init plan of the same statement.
  const skip = statement<{ id: string; createdAt: Date; recent: number }>(
    `${list.name}.skippedPage`,
    `SELECT id, created_at AS "createdAt",
            (SELECT count(*) FROM ${table} WHERE ${where} AND created_at >= ${$(1)}::timestamptz${idFrom(4)})::int AS recent
     FROM ${table} WHERE ${where}
     ORDER BY ${ORDER} OFFSET ${$(2)}::bigint LIMIT ${$(3)}::int`,
  );
  // shift = rows at or before the mark now (settled, plus those created since its bound) minus the
  // offset asked: that many of the page's rows lie at or before the mark's row (read upwards from it),
  // the rest after it (read downwards, past -shift rows when the page starts below the mark's row).
  const shift = '(SELECT shift FROM counted)';
  const limit = `${$(7)}::int`;
  const before = `GREATEST(0, LEAST(${shift}, ${limit}))`;
  const continuedPage = (name: string, window: string) =>
    statement<{ shift: number; recent: number; rows: { id: string; createdAt: string }[] }>(
      name,
      `WITH counts AS MATERIALIZED (
         SELECT count(*) FILTER (WHERE created_at < ${$(2)}::timestamptz)::int AS between,
                count(*) FILTER (WHERE created_at >= ${$(2)}::timestamptz)::int AS recent
         FROM ${table} WHERE ${where} AND created_at >= ${$(1)}::timestamptz${idFrom(9)}
       ), counted AS MATERIALIZED (
         SELECT ${$(3)}::int + between + recent - ${$(4)}::bigint AS shift, recent FROM counts
       ), page AS (
         (SELECT id, created_at FROM ${table}
          WHERE ${where} AND created_at >= ${$(5)}::timestamptz AND (created_at > ${$(5)}::timestamptz OR id >= ${$(6)}::uuid)${window}
            AND abs(${shift}) <= ${$(8)}::int
          ORDER BY created_at, id OFFSET GREATEST(0, ${shift} - ${limit}) LIMIT ${before})
         UNION ALL
         (SELECT id, created_at FROM ${table}
          WHERE ${where} AND created_at <= ${$(5)}::timestamptz AND (created_at < ${$(5)}::timestamptz OR id < ${$(6)}::uuid)${window}
            AND abs(${shift}) <= ${$(8)}::int
          ORDER BY ${ORDER} OFFSET GREATEST(0, -${shift}) LIMIT ${limit} - ${before})
       )
       SELECT c.shift::int AS shift, c.recent,
              coalesce((SELECT json_agg(json_build_object('id', p.id, 'createdAt', p.created_at) ORDER BY p.created_at DESC, p.id DESC) FROM page p), '[]') AS rows
       FROM counted c`,
    );
  // Where the id is partitioned by month, a page is looked for first among the ids made near the mark's
  // row (the month or two about it planned, not every month the list spans), then, when the window did
  // not hold it, among all.
  const near = byId
    ? continuedPage(
        `${list.name}.continuedPage`,
        ` AND id >= uuidv7_floor(${$(10)}::timestamptz) AND id < uuidv7_floor(${$(11)}::timestamptz)`,
      )
    : undefined;
  const anywhere = continuedPage(near ? `${list.name}.continuedPageAnywhere` : `${list.name}.continuedPage`, '');
  const read = async (sql: SqlSession, page: typeof anywhere, params: unknown[]): Promise<ContinuedPage> => {
    const [row] = await sql.run(page, params);
    const { shift, recent, rows } = row!;
    return { shift, recent, rows: rows.map((r) => ({ id: r.id, createdAt: new Date(r.createdAt) })) };
  };
  return {
    async skip(sql, values, settledBefore, offset, limit) {
      const params = [...values, settledBefore, offset, limit];
      if (byId) params.push(new Date(settledBefore.getTime() - ID_TIME_MARGIN_MS));
      const rows = await sql.run(skip, params);
      return { rows: rows.map(({ id, createdAt }) => ({ id, createdAt })), recent: rows[0]?.recent ?? 0 };
    },
    async continued(sql, values, mark, settledBefore, at) {
      const { key } = mark;
      const params = [...values, mark.settledBefore, settledBefore, mark.settled, at.offset, key.createdAt, key.id, at.limit, at.maxShift];
      if (!near) return read(sql, anywhere, params);
      params.push(new Date(mark.settledBefore.getTime() - ID_TIME_MARGIN_MS));
      const t = key.createdAt.getTime();
      const page = await read(sql, near, [
        ...params,
        new Date(Math.max(0, t - at.windowMs - ID_TIME_MARGIN_MS)),
        new Date(t + at.windowMs + ID_TIME_MARGIN_MS + 1),
      ]);
      // Every row made within windowMs of the key's row has its id in the window. The halves read from the
      // key outwards in time, so the page is whole when it is full and its farthest row lies within.
      const whole =
        Math.abs(page.shift) > at.maxShift ||
        (page.rows.length === at.limit && page.rows.every((r) => Math.abs(r.createdAt.getTime() - t) <= at.windowMs));
      return whole ? page : read(sql, anywhere, params);
    },
  };
}
