import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { runRead, type ReadStatement } from '../../db/reads/run.js';
import { Unsupported } from '../../db/reads/where.js';
import type { RequestScope } from '../../http/request-scope.js';
import { graphqlReadPaths } from '../../ops/metrics.js';
import { planOperation } from '../compiled-reads/plan-operation.js';
import type { ReadPlan } from '../../db/reads/plan.js';
import type { GraphQLContext } from '../context.js';
import { deliversIncrementally } from './defer-stream.js';
import type { KnownReads } from './known-reads.js';
import { operationVariables } from './variables.js';

// Queries the schema can say as one SQL statement are answered by it: PostgreSQL writes the JSON text
// of `data`, which goes out as it is, without resolvers, result objects or a second serialization.
// Any other operation, or one whose plan the database layer cannot compile, runs the ordinary way.
// Registered last, so that every other plugin's onExecute (limits, metrics) has run. A document answered
// this way is remembered for the lean lane (lean-lane.ts).

export const compiledPath = graphqlReadPaths.labels('compiled');
const resolvers = graphqlReadPaths.labels('resolvers');

/** The `data` text of a plan's statement, or null when the resolvers must answer (and why was logged). */
export async function compiledData(ctx: GraphQLContext, read: ReadPlan | ReadStatement): Promise<string | null> {
  try {
    // Null: a row asked for by id is not the caller's, and the resolvers answer with their NOT_FOUND.
    return await runRead(ctx.service.sql, read);
  } catch (error) {
    // The ordinary way answers as it always has, a failure included; only a surprise is worth a log line.
    if (!(error instanceof Unsupported)) ctx.service.log.warn({ err: error }, 'compiled read failed; answered by resolvers');
    return null;
  }
}

export function compiledReads(known: KnownReads): Plugin {
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue as unknown as GraphQLContext & { scope?: RequestScope; params?: { query?: unknown } };
      const { coerced } = operationVariables(args);
      // An answer in parts (@defer, @stream) is written by execution, part by part. A request the lean
      // lane ran this statement for already has its answer: the resolvers'.
      const plan =
        !coerced || ctx.scope?.compiledReadDeclined || deliversIncrementally(args.document)
          ? null
          : planOperation(args.schema, args.document, args.operationName, coerced, ctx);
      const data = plan && (await compiledData(ctx, plan));
      if (data === null) {
        resolvers.inc();
        return;
      }
      compiledPath.inc();
      const query = ctx.params?.query;
      if (typeof query === 'string') known.remember(query, args.schema, args.document, args.operationName);
      // Yoga writes a result through its `stringify` when it has one.
      const result: ExecutionResult & { stringify: () => string } = { stringify: () => `{"data":${data}}` };
      setResultAndStopExecution(result);
    },
  };
}
