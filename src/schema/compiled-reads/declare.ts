import type { ListQuery, Value } from '../../db/reads/plan.js';
import type { GraphQLContext } from '../context.js';

// What the schema tells the compiled read path beyond what Pothos records on the fields it builds.
// Exposed fields and to-one relations need nothing: their columns and keys come from the data model.
// A connection keeps its options inside Pothos, so it is declared through compiledConnection, which
// hands the same options to Pothos and to the compiled path; one left undeclared is simply answered by
// the resolvers. A computed field may say which stored value it shows. A filter given here must be a
// function of the arguments and the caller's id alone (no clock, no other state): the GraphQL lean lane
// runs the statement compiled for one request again for the same read, caller and variables.

export const COMPILED_CONNECTION = 'compiledConnection';
export const COMPILED_VALUE = 'compiledValue';
export const COMPILED_ITEM = 'compiledItem';

/** A root field answering one row: its service's filter for these arguments and this caller. */
export type CompiledItem = (args: Record<string, unknown>, ctx: GraphQLContext) => ListQuery;

/**
 * A root `prismaField`'s `extensions`: the filter its service finds the row with. When no row matches the
 * resolvers answer, so that the answer is their error (NOT_FOUND).
 */
export function compiledItem<Args>(query: (args: Args, ctx: GraphQLContext) => ListQuery): Record<string, unknown> {
  return { [COMPILED_ITEM]: query };
}

type QueryOf = (args: Record<string, unknown>, ctx: GraphQLContext) => ListQuery;

export interface CompiledConnection {
  cursor: string;
  /** The rows' filter and order for these arguments (a root list's includes the caller's tenancy). */
  query: QueryOf | ListQuery | undefined;
  totalCount: boolean;
  defaultSize: number | undefined;
  maxSize: number | undefined;
}

/** The options a connection hands Pothos that decide which rows it reads and how it pages them. */
interface PageOptions {
  cursor: string;
  totalCount?: unknown;
  defaultSize?: number;
  maxSize?: number;
}

/**
 * A connection's `extensions`, made from the same options and query it hands Pothos (spread them into
 * both): `query` is a relation's filter and order, or a root list's service query with its tenancy.
 */
export function compiledConnection<Args>(
  options: PageOptions,
  query: ((args: Args, ctx: GraphQLContext) => ListQuery) | ListQuery,
): Record<string, unknown> {
  const connection: CompiledConnection = {
    cursor: options.cursor,
    query: query as CompiledConnection['query'],
    totalCount: options.totalCount !== undefined && options.totalCount !== false,
    defaultSize: options.defaultSize,
    maxSize: options.maxSize,
  };
  return { [COMPILED_CONNECTION]: connection };
}

/** On a computed field: it shows the text under `key` in the JSON column `field`, or null. */
export function jsonTextValue(field: string, key: string): Record<string, unknown> {
  return { [COMPILED_VALUE]: { kind: 'jsonText', field, key } satisfies Value };
}
