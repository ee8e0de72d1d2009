import { getOperationAST, Kind, type DocumentNode, type GraphQLSchema, type SelectionSetNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { RateLimitBucket, RateLimiter } from '../../ops/rate-limits.js';
import type { GraphQLContext } from '../context.js';
import { graphQLErrorOf } from '../errors.js';
import {
  type AppError,
  PayloadTooLargeError,
  RateLimitedError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../../services/errors.js';
import type { RequestScope } from '../../http/request-scope.js';

/**
 * Spends the caller's budgets before an operation runs: the general one, plus the bucket of each root
 * field that declares one (`extensions: rateLimit('import')`), once per field executed, so aliases count.
 * A subscription spends them once, when it opens; its events spend none. A field refused for its input
 * (field errors, too large, not a CSV) gives its bucket back: nothing was done.
 */
export function graphqlRateLimits(limiter: RateLimiter): Plugin<GraphQLContext> {
  /** What to answer instead of running the operation, or nothing when the budgets allow it. */
  const refusal = async (args: Operation, buckets: Map<string, RateLimitBucket>) => {
    const { user, service } = args.contextValue;
    // A request the lean lane handed over has spent its budgets there, once.
    const spent = (args.contextValue as { scope?: RequestScope }).scope?.spentBudgets;
    try {
      if (spent === undefined) await limiter.consume(user.id, [...buckets.values()]);
      else if (spent) throw spent;
      return undefined;
    } catch (error) {
      if (!(error instanceof RateLimitedError)) throw error;
      return { errors: [graphQLErrorOf(service.log, error)] };
    }
  };
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const buckets = rootFieldBuckets(args.schema, args.document, args.operationName);
      const refused = await refusal(args, buckets);
      if (refused) return setResultAndStopExecution(refused);
      if (buckets.size === 0) return undefined;
      return {
        async onExecuteDone({ result }) {
          if (!('errors' in result) || !result.errors) return;
          const returned = result.errors.flatMap((error) => {
            const bucket = buckets.get(String(error.path?.[0]));
            return bucket && error.path?.length === 1 && refusedForInput(error.originalError) ? [bucket] : [];
          });
          if (returned.length) await limiter.giveBack(args.contextValue.user.id, returned);
        },
      };
    },
    async onSubscribe({ args, setResultAndStopExecution }) {
      const refused = await refusal(args, rootFieldBuckets(args.schema, args.document, args.operationName));
      if (refused) setResultAndStopExecution(refused);
    },
  };
}

interface Operation {
  contextValue: GraphQLContext;
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null;
}

const refusedForInput = (error: unknown): error is AppError =>
  error instanceof ValidationError || error instanceof PayloadTooLargeError || error instanceof UnsupportedMediaTypeError;

/** The budgets an operation spends beside the general one: the bucket of each root field that declares one, by response name. */
export function rootFieldBuckets(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName?: string | null,
): Map<string, RateLimitBucket> {
  const buckets = new Map<string, RateLimitBucket>();
  const operation = getOperationAST(document, operationName);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return buckets;
  const fields = root.getFields();
  const fragments = new Map<string, SelectionSetNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition.selectionSet);
  }
  // Keyed by response name: GraphQL runs a field once per name, however many fragments repeat it.
  // Validation has already refused fragment cycles.
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
  return buckets;
}
