import { getOperationAST, Kind, type DocumentNode, type GraphQLSchema, type SelectionSetNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { RateLimitBucket, RateLimiter } from '../../ops/rate-limits.js';
import type { GraphQLContext } from '../context.js';
import { graphQLErrorOf } from '../errors.js';
import { RateLimitedError } from '../../services/errors.js';
import type { RequestScope } from '../../http/request-scope.js';

/**
 * Spends the caller's budgets before an operation runs: the general one, plus the bucket of each root
 * field that declares one (`extensions: rateLimit('import')`), once per field executed, so aliases count.
 * A subscription spends them once, when it opens; its events spend none.
 */
export function graphqlRateLimits(limiter: RateLimiter): Plugin<GraphQLContext> {
  /** What to answer instead of running the operation, or nothing when the budgets allow it. */
  const refusal = async (args: {
    contextValue: GraphQLContext;
    schema: GraphQLSchema;
    document: DocumentNode;
    operationName?: string | null;
  }) => {
    const { user, service } = args.contextValue;
    // A request the lean lane handed over has spent its budgets there, once.
    const spent = (args.contextValue as { scope?: RequestScope }).scope?.spentBudgets;
    try {
      if (spent === undefined) await limiter.consume(user.id, rootFieldBuckets(args.schema, args.document, args.operationName));
      else if (spent) throw spent;
      return undefined;
    } catch (error) {
      if (!(error instanceof RateLimitedError)) throw error;
      return { errors: [graphQLErrorOf(service.log, error)] };
    }
  };
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const refused = await refusal(args);
      if (refused) setResultAndStopExecution(refused);
    },
    async onSubscribe({ args, setResultAndStopExecution }) {
      const refused = await refusal(args);
      if (refused) setResultAndStopExecution(refused);
    },
  };
}

/** The budgets an operation spends beside the general one: its root fields' buckets. */
export function rootFieldBuckets(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): RateLimitBucket[] {
  const operation = getOperationAST(document, operationName);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return [];
  const fields = root.getFields();
  const fragments = new Map<string, SelectionSetNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition.selectionSet);
  }
  // Keyed by response name: GraphQL runs a field once per name, however many fragments repeat it.
  // Validation has already refused fragment cycles.
  const buckets = new Map<string, RateLimitBucket>();
  // A fragment adds the same fields however often it is spread, so each is read once: followed spread
  // by spread, three levels of 300 spreads were 27 million visits.
  const read = new Set<string>();
  const collect = (selectionSet: SelectionSetNode) => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const bucket = fields[selection.name.value]?.extensions.rateLimit as RateLimitBucket | undefined;
        if (bucket) buckets.set(selection.alias?.value ?? selection.name.value, bucket);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        collect(selection.selectionSet);
      } else if (!read.has(selection.name.value)) {
        read.add(selection.name.value);
        const spread = fragments.get(selection.name.value);
        if (spread) collect(spread);
      }
    }
  };
  collect(operation.selectionSet);
  return [...buckets.values()];
}
