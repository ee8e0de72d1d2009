import type { DocumentNode, GraphQLSchema } from 'graphql';
import type { ReadStatement } from '../../db/reads/run.js';
import type { RateLimitBucket } from '../../ops/rate-limits.js';
import type { Principal } from '../../services/context.js';
import { graphqlOperationDuration, graphqlOperations } from '../../ops/metrics.js';
import { operationLabels } from './metrics.js';
import { rootFieldBuckets } from './rate-limits.js';

// The query documents the full path has answered with a compiled read: parsed, validated, within the
// limits and trusted, each by its exact text and operation name. What is kept is what does not change
// from one request to the next. Also kept: the statement a request of a known read ran, by the read, the
// caller's id and the variables' JSON text, the only inputs its coercion, cost, plan and SQL depend on (a
// compiled query's filter is a function of the arguments and the caller's id, see declare.ts). A request
// with the same ones skips them; the caller, the input checks, the budgets and the statement itself are
// still done for every request.

/** How many documents are kept: a real client sends a few dozen; a client sending new texts fills no more. */
const MAX_DOCUMENTS = 500;
/** How many statements are kept over all documents, the oldest dropped first (a few hundred bytes each). */
const MAX_STATEMENTS = 10_000;

export interface KnownRead {
  /** Tells the read apart in the keys of its statements. */
  readonly id: number;
  readonly schema: GraphQLSchema;
  readonly document: DocumentNode;
  readonly operationName: string | undefined;
  readonly buckets: RateLimitBucket[];
  /** The operation's metric series, looked up once. */
  readonly timer: ReturnType<typeof graphqlOperationDuration.labels>;
  readonly succeeded: ReturnType<typeof graphqlOperations.labels>;
}

const keyOf = (query: string, operationName: string | null | undefined) => `${operationName ?? ''}\n${query}`;

/** The key of a request's statement: its read, its caller's id and its variables as JSON text. */
export const statementKey = (read: KnownRead, user: Principal, variables: string) =>
  `${read.id}\n${user.id}\n${user.isAdmin}\n${variables}`;

/** Keys longer than this (large variables) are not kept: memory stays bounded by the count of keys. */
const MAX_KEY_LENGTH = 1_024;

export class KnownReads {
  readonly #reads = new Map<string, KnownRead>();
  readonly #statements = new Map<string, ReadStatement>();

  get size(): number {
    return this.#reads.size;
  }

  find(query: string, operationName: string | null | undefined): KnownRead | undefined {
    return this.#reads.get(keyOf(query, operationName));
  }

  remember(query: string, schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined): void {
    const key = keyOf(query, operationName);
    if (this.#reads.has(key) || this.#reads.size >= MAX_DOCUMENTS) return;
    const labels = operationLabels(document, operationName);
    this.#reads.set(key, {
      id: this.#reads.size,
      schema,
      document,
      operationName: operationName ?? undefined,
      buckets: [...rootFieldBuckets(schema, document, operationName).values()],
      timer: graphqlOperationDuration.labels(labels),
      succeeded: graphqlOperations.labels({ ...labels, result: 'success' }),
    });
  }

  /** The statement a request with this key (statementKey) ran, when one did. */
  statement(key: string): ReadStatement | undefined {
    return this.#statements.get(key);
  }

  keepStatement(key: string, statement: ReadStatement): void {
    if (key.length > MAX_KEY_LENGTH) return;
    if (this.#statements.size >= MAX_STATEMENTS) this.#statements.delete(this.#statements.keys().next().value!);
    this.#statements.set(key, statement);
  }
}
