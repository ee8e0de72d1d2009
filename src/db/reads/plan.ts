// A read plan: what one GraphQL query asks of the database, in the data model's terms (models, fields,
// relations, Prisma filters), with every response key in answer order. src/schema/compiled-reads builds
// it from an operation; ./compile.ts turns it into one SQL statement that answers the whole JSON text.

/** How a scalar's value is written in JSON, matching what the GraphQL scalar would serialize. */
export type ScalarForm = 'string' | 'number' | 'boolean' | 'datetime';

/** The parts of a Prisma query a read plan carries: a filter and an order (both as the stores write them). */
export interface ListQuery {
  where?: Record<string, unknown>;
  orderBy?: Record<string, unknown> | Record<string, unknown>[];
}

export type Value =
  /** A fixed JSON text (`__typename`). */
  | { kind: 'constant'; json: string }
  /** A column of the row. */
  | { kind: 'scalar'; field: string; form: ScalarForm }
  /** A text inside a JSON column of the row (`data->>'first_name'`), null when absent. */
  | { kind: 'jsonText'; field: string; key: string }
  /** The row a to-one relation points at, or null. */
  | { kind: 'relation'; field: string; node: Node }
  /** A page of the rows a to-many relation holds. */
  | { kind: 'connection'; field: string; page: Page };

export interface Node {
  model: string;
  fields: [key: string, value: Value][];
}

export type PageInfoPart = 'hasNextPage' | 'hasPreviousPage' | 'startCursor' | 'endCursor';

export type ConnectionPart =
  | { kind: 'constant'; json: string }
  | { kind: 'totalCount' }
  | { kind: 'edges'; fields: [key: string, part: EdgePart][] }
  | { kind: 'pageInfo'; fields: [key: string, part: PageInfoPart | { constant: string }][] };

export type EdgePart = { kind: 'constant'; json: string } | { kind: 'cursor' } | { kind: 'node'; node: Node };

/** A forward page (the first `size` rows, after a cursor's row when given) in an order, cursors on one text field. */
export interface Page {
  model: string;
  query: ListQuery;
  size: number;
  cursorField: string;
  /** The cursor field's value of the row the page starts after. */
  after?: string;
  fields: [key: string, part: ConnectionPart][];
}

/** A whole operation: the root fields, each a page of one model's rows or one row found by a filter. */
export interface ReadPlan {
  fields: [
    key: string,
    value: { kind: 'constant'; json: string } | { kind: 'page'; page: Page } | { kind: 'item'; query: ListQuery; node: Node },
  ][];
}
