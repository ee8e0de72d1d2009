import type { ListKey, ListMark, OffsetPageReads } from '../db/offset-pages.js';
import type { SqlSession } from '../db/sql.js';
import type { ServiceContext } from './context.js';

// v1 lists keep limit and offset. A client walking a long list asks for offset N, then N + limit, and so
// on: each page read from the top skips N index entries. Instead, where a page ended is remembered (its
// last row's key), and a later page near it is read from that key by an index range, reading about its
// own rows. docs/decisions.md, "Deep v1 offsets continued from the previous page", has the argument
// that the rows are exactly those of the offset.

/** From this offset on, a page is read by the rules here; above it, skipping costs less than counting. */
export const DEEP_OFFSET = 1_000;

/**
 * Rows older than this are settled: none is added, removed or reordered any more (a call's attempt is
 * inserted when the dialer claims it, and removed only when the provider refuses it at once).
 */
export const SETTLED_AFTER_MS = 60 * 60 * 1000;

/** A remembered page is used this long: the rows created since its bound, counted by each use, stay few. */
export const REMEMBERED_FOR_MS = 10 * 60 * 1000;

/** How far (rows) an offset may lie from a remembered page's end to continue from it. */
export const MAX_SHIFT = 1_000;

/**
 * A continued page is looked for first among the rows made within this time of the remembered row; where
 * the rows of the page before lay farther apart, within four times what as many rows as it reads would span.
 */
export const MIN_WINDOW_MS = 7 * 24 * 3600 * 1000;

/**
 * Lists remembered per process, and pages per list (walks of one list side by side): 10,000 positions,
 * about 11 MB as measured, whatever clients send.
 */
export const MAX_LISTS = 2_500;
const MARKS_PER_LIST = 4;

interface Remembered extends ListMark {
  /** Rows at or before the key when it was read: the offset a walking client asks for next. */
  end: number;
  at: number;
  /** The time between two of the rows on the page that ended there (their average). */
  msPerRow: number;
}

/** Where pages of each caller's lists ended, least recently used dropped first. */
export class OffsetMemory {
  readonly #lists = new Map<string, Remembered[]>();

  constructor(private readonly maxLists = MAX_LISTS) {}

  get size(): number {
    return this.#lists.size;
  }

  /** The fresh mark whose end lies nearest `offset`, within MAX_SHIFT. */
  nearest(list: string, offset: number, now: number): Remembered | undefined {
    const marks = this.#lists.get(list);
    if (!marks) return undefined;
    this.#lists.delete(list);
    this.#lists.set(list, marks);
    let best: Remembered | undefined;
    for (const mark of marks) {
      if (now - mark.at > REMEMBERED_FOR_MS || Math.abs(offset - mark.end) > MAX_SHIFT) continue;
      if (!best || Math.abs(offset - mark.end) < Math.abs(offset - best.end)) best = mark;
    }
    return best;
  }

  remember(list: string, mark: Remembered): void {
    const marks = (this.#lists.get(list) ?? []).filter((m) => m.end !== mark.end);
    this.#lists.delete(list);
    this.#lists.set(list, [mark, ...marks].slice(0, MARKS_PER_LIST));
    if (this.#lists.size > this.maxLists) this.#lists.delete(this.#lists.keys().next().value!);
  }
}

/** One v1 list of one caller, as the continuation reads it. */
export interface OffsetList {
  /** The caller, the list and its filters: pages remembered under one name continue each other. */
  name: string;
  reads: OffsetPageReads;
  /** The list's own parameters ($1 to $n of its condition). */
  values: unknown[];
  /** Rows older than this may be dropped (whole months past the retention): a page ending there is not remembered. */
  keptSince?: Date | undefined;
}

/** The keys of the rows at [offset, offset + limit) of the list, newest first, for an offset of DEEP_OFFSET or more. */
export async function deepPageKeys(ctx: ServiceContext, list: OffsetList, offset: number, limit: number): Promise<ListKey[]> {
  const sql: SqlSession = ctx.sql;
  const memory = ctx.offsets;
  const now = ctx.clock.now().getTime();
  const settledBefore = new Date(now - SETTLED_AFTER_MS);
  const mark = memory?.nearest(list.name, offset, now);
  if (mark) {
    // The bound moves on with the clock (never back), so the rows counted as recent stay those of the last hour or so.
    const bound = new Date(Math.max(mark.settledBefore.getTime(), settledBefore.getTime()));
    const windowMs = Math.max(MIN_WINDOW_MS, 4 * mark.msPerRow * (Math.abs(offset - mark.end) + limit));
    const page = await list.reads.continued(sql, list.values, mark, bound, { offset, limit, maxShift: MAX_SHIFT, windowMs });
    if (Math.abs(page.shift) <= MAX_SHIFT) {
      rememberEnd(ctx, list, offset, page.rows, page.recent, bound, now);
      return page.rows;
    }
  }
  const page = await list.reads.skip(sql, list.values, settledBefore, offset, limit);
  rememberEnd(ctx, list, offset, page.rows, page.recent, settledBefore, now);
  return page.rows;
}

function rememberEnd(
  ctx: ServiceContext,
  list: OffsetList,
  offset: number,
  rows: ListKey[],
  recent: number,
  settledBefore: Date,
  now: number,
) {
  const key = rows.at(-1);
  // Only a key among settled rows: every row created since the bound is then ahead of it, and counted.
  if (!ctx.offsets || !key || key.createdAt >= settledBefore || (list.keptSince && key.createdAt < list.keptSince)) return;
  const end = offset + rows.length;
  const msPerRow = (rows[0]!.createdAt.getTime() - key.createdAt.getTime()) / Math.max(1, rows.length - 1);
  ctx.offsets.remember(list.name, { key, end, settled: end - recent, settledBefore, at: now, msPerRow });
}
