import type { PrismaClient } from '../generated/prisma/client.js';
import { sqlModel } from '../generated/sql-model.js';

// Prisma reads a page after a cursor with a condition on the order's columns written as an OR
// ((created_at = $c AND id <= $i) OR created_at < $c), which PostgreSQL can only apply as a filter: the
// page's index is read from the list's start, every row before the cursor included, so a page deep in a
// list of millions costs as much as those millions. Every read with a cursor, at the root or in a nested
// relation, also gets the bound that condition implies on the order's first column (created_at <= $c),
// which the index starts its range at: the rows are the same, the rows read only the page's.
//
// A nested relation read after a cursor (a connection's later page, loaded with its parent) is no such
// read in SQL: Prisma reads every row of the relation after the cursor, for all parents at once, and cuts
// each parent's page in memory, so a page halfway down 2x10^5 attempts read 10^5. Such a relation is
// taken out of its parent's read and read for each parent row on its own, as a root read with the
// parent's keys added to its filter: its cursor, order, `take` and `skip` go to SQL, bounded as above.
// First pages (no cursor) stay in the parent's read, one statement for any number of parents.

type Args = Record<string, unknown>;
type Order = Record<string, unknown>;

const delegateOf = (model: string) => model[0]!.toLowerCase() + model.slice(1);
type Delegate = Record<string, (args: unknown) => Promise<unknown>>;
const delegate = (base: PrismaClient, model: string) => (base as unknown as Record<string, Delegate>)[delegateOf(model)]!;

/** The first column of an order and its direction, when it is a plain column other than the cursor's. */
function leadingOrder(orderBy: unknown, cursor: Args): { field: string; direction: 'asc' | 'desc' } | undefined {
  const first = (Array.isArray(orderBy) ? orderBy[0] : orderBy) as Order | undefined;
  const entry = first && Object.entries(first)[0];
  if (!entry || entry[0] in cursor) return undefined;
  const direction = typeof entry[1] === 'string' ? entry[1] : (entry[1] as { sort?: unknown } | null)?.sort;
  return direction === 'asc' || direction === 'desc' ? { field: entry[0], direction } : undefined;
}

/** `args` of a read of `model` with the cursor's bound added, here and in its nested relations. */
async function withBounds(base: PrismaClient, model: string, args: Args): Promise<Args> {
  let bounded = args;
  const cursor = args.cursor as Args | undefined;
  const order = cursor && leadingOrder(args.orderBy, cursor);
  if (cursor && order) {
    const row = (await delegate(base, model).findUnique!({ where: cursor, select: { [order.field]: true } })) as Args | null;
    const value = row?.[order.field];
    // No cursor row, or no value to bound by: Prisma's own condition decides alone, as before.
    if (value !== null && value !== undefined) {
      const bound = { [order.field]: { [order.direction === 'desc' ? 'lte' : 'gte']: value } };
      bounded = { ...args, where: args.where ? { AND: [args.where, bound] } : bound };
    }
  }
  const fields = sqlModel.models[model]?.fields ?? {};
  for (const key of ['include', 'select'] as const) {
    const nested = bounded[key] as Args | undefined;
    if (!nested || typeof nested !== 'object') continue;
    let changed: Args | undefined;
    for (const [name, value] of Object.entries(nested)) {
      const field = fields[name];
      if (field?.kind !== 'relation' || !value || typeof value !== 'object') continue;
      const inner = await withBounds(base, field.model, value as Args);
      if (inner !== value) (changed ??= { ...nested })[name] = inner;
    }
    if (changed) bounded = { ...bounded, [key]: changed };
  }
  return bounded;
}

const READS = new Set(['findUnique', 'findUniqueOrThrow', 'findFirst', 'findFirstOrThrow', 'findMany']);

interface PagedRelation {
  name: string;
  model: string;
  args: Args;
  /** The child's key fields and the parent's fields they hold. */
  from: string[];
  to: string[];
}

/** `args` without its to-many relations read after a cursor, and those relations (none: `args` itself). */
function takeOutPagedRelations(model: string, args: Args): { rest: Args; paged: PagedRelation[]; added: string[] } {
  const fields = sqlModel.models[model]?.fields ?? {};
  const paged: PagedRelation[] = [];
  let rest = args;
  for (const key of ['include', 'select'] as const) {
    const nested = args[key] as Args | undefined;
    if (!nested || typeof nested !== 'object') continue;
    for (const [name, value] of Object.entries(nested)) {
      const field = fields[name];
      if (field?.kind !== 'relation' || !field.isList || !value || typeof value !== 'object' || !(value as Args).cursor) continue;
      const back = Object.values(sqlModel.models[field.model]!.fields).find(
        (f) => f.kind === 'relation' && f.relationName === field.relationName && f.from.length > 0,
      );
      if (back?.kind !== 'relation') continue;
      const others = { ...(rest[key] as Args) };
      delete others[name];
      rest = { ...rest, [key]: others };
      paged.push({ name, model: field.model, args: value as Args, from: back.from, to: back.to });
    }
  }
  // A select must still read the parent's fields the relation is found by; they leave the answer after.
  const select = rest.select as Args | undefined;
  const added = select ? [...new Set(paged.flatMap((p) => p.to))].filter((f) => !select[f]) : [];
  if (select && added.length) rest = { ...rest, select: { ...select, ...Object.fromEntries(added.map((f) => [f, true])) } };
  return { rest, paged, added };
}

/** A read of `model` whose to-many relations after a cursor are each read on their own, per parent row. */
async function readWithPagedRelations(
  base: PrismaClient,
  model: string,
  args: Args,
  run: (args: Args) => Promise<unknown>,
): Promise<unknown> {
  const { rest, paged, added } = takeOutPagedRelations(model, args);
  const result = await run(await withBounds(base, model, rest));
  if (!paged.length || !result) return result;
  const rows = (Array.isArray(result) ? result : [result]) as Args[];
  await Promise.all(
    rows.flatMap((row) =>
      paged.map(async (relation) => {
        const keys = Object.fromEntries(relation.from.map((f, i) => [f, row[relation.to[i]!]]));
        const where = relation.args.where ? { AND: [relation.args.where, keys] } : keys;
        const childArgs = { ...relation.args, where };
        row[relation.name] = await readWithPagedRelations(base, relation.model, childArgs, (a) =>
          delegate(base, relation.model).findMany!(a),
        );
      }),
    ),
  );
  for (const row of rows) for (const field of added) delete row[field];
  return result;
}

/** Whether the read or one of its nested relations reads after a cursor (most do not, and pass as they are). */
function hasCursor(args: unknown): boolean {
  if (typeof args !== 'object' || args === null) return false;
  const { cursor, include, select } = args as Args;
  if (cursor) return true;
  return [include, select].some((nested) => typeof nested === 'object' && nested !== null && Object.values(nested).some(hasCursor));
}

/** The client with every cursor read bounded as above; the same client type, the same answers. */
export function keysetCursors(base: PrismaClient): PrismaClient {
  return base.$extends({
    query: {
      $allModels: {
        async $allOperations({ model, operation, args, query }) {
          if (!hasCursor(args)) return query(args);
          if (!READS.has(operation)) return query((await withBounds(base, model, args as Args)) as typeof args);
          return readWithPagedRelations(base, model, args as Args, (a) => query(a as typeof args));
        },
      },
    },
  }) as unknown as PrismaClient;
}
