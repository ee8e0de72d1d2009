import type { PrismaClient } from '../generated/prisma/client.js';
import { sqlModel } from '../generated/sql-model.js';

// Prisma reads a page after a cursor with a condition on the order's columns written as an OR
// ((created_at = $c AND id <= $i) OR created_at < $c), which PostgreSQL can only apply as a filter: the
// page's index is read from the list's start, every row before the cursor included, so a page deep in a
// list of millions costs as much as those millions. Every read with a cursor, at the root or in a nested
// relation, also gets the bound that condition implies on the order's first column (created_at <= $c),
// which the index starts its range at: the rows are the same, the rows read only the page's.

type Args = Record<string, unknown>;
type Order = Record<string, unknown>;

const delegateOf = (model: string) => model[0]!.toLowerCase() + model.slice(1);

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
    const delegate = (base as unknown as Record<string, { findUnique(q: unknown): Promise<Args | null> }>)[delegateOf(model)]!;
    const row = await delegate.findUnique({ where: cursor, select: { [order.field]: true } });
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
        async $allOperations({ model, args, query }) {
          if (!hasCursor(args)) return query(args);
          return query((await withBounds(base, model, args as Args)) as typeof args);
        },
      },
    },
  }) as unknown as PrismaClient;
}
