import type { DocumentNode, GraphQLSchema } from 'graphql';
import type { RateLimitBucket } from '../../ops/rate-limits.js';
import { graphqlOperationDuration, graphqlOperations } from '../../ops/metrics.js';
import { operationLabels } from './metrics.js';
import { rootFieldBuckets } from './rate-limits.js';

// The query documents the full path has answered with a compiled read: parsed, validated, within the
// limits and trusted, each by its exact text and operation name. What is kept is what does not change
// from one request to the next; everything that depends on the request (the caller, the variables, the
// budgets, the plan) is done again by the lean lane for every request.

/** How many documents are kept: a real client sends a few dozen; a client sending new texts fills no more. */
const MAX_DOCUMENTS = 500;

export interface KnownRead {
  readonly schema: GraphQLSchema;
  readonly document: DocumentNode;
  readonly operationName: string | undefined;
  readonly buckets: RateLimitBucket[];
  /** The operation's metric series, looked up once. */
  readonly timer: ReturnType<typeof graphqlOperationDuration.labels>;
  readonly succeeded: ReturnType<typeof graphqlOperations.labels>;
}

const keyOf = (query: string, operationName: string | null | undefined) => `${operationName ?? ''}\n${query}`;

export class KnownReads {
  readonly #reads = new Map<string, KnownRead>();

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
      schema,
      document,
      operationName: operationName ?? undefined,
      buckets: [...rootFieldBuckets(schema, document, operationName).values()],
      timer: graphqlOperationDuration.labels(labels),
      succeeded: graphqlOperations.labels({ ...labels, result: 'success' }),
    });
  }
}
