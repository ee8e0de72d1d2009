import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { runRead } from '../../db/reads/run.js';
import { Unsupported } from '../../db/reads/where.js';
import { graphqlReadPaths } from '../../ops/metrics.js';
import { planOperation } from '../compiled-reads/plan-operation.js';
import type { GraphQLContext } from '../context.js';
import { deliversIncrementally } from './defer-stream.js';
import { operationVariables } from './variables.js';

// Queries the schema can say as one SQL statement are answered by it: PostgreSQL writes the JSON text
// of `data`, which goes out as it is, without resolvers, result objects or a second serialization.
// Any other operation, or one whose plan the database layer cannot compile, runs the ordinary way.
// Registered last, so that every other plugin's onExecute (limits, metrics) has run.

const compiled = graphqlReadPaths.labels('compiled');
const resolvers = graphqlReadPaths.labels('resolvers');

export const compiledReads: Plugin = {
  async onExecute({ args, setResultAndStopExecution }) {
    const ctx = args.contextValue as unknown as GraphQLContext;
    const { coerced } = operationVariables(args);
    // An answer in parts (@defer, @stream) is written by execution, part by part.
    const plan =
      !coerced || deliversIncrementally(args.document) ? null : planOperation(args.schema, args.document, args.operationName, coerced, ctx);
    if (!plan) {
      resolvers.inc();
      return;
    }
    let data: string | null;
    try {
      data = await runRead(ctx.service.sql, plan);
    } catch (error) {
      // The ordinary way answers as it always has, a failure included; only a surprise is worth a log line.
      if (!(error instanceof Unsupported)) ctx.service.log.warn({ err: error }, 'compiled read failed; answered by resolvers');
      resolvers.inc();
      return;
    }
    if (data === null) {
      // A row asked for by id is not the caller's: the resolvers answer with their NOT_FOUND.
      resolvers.inc();
      return;
    }
    compiled.inc();
    // Yoga writes a result through its `stringify` when it has one.
    const result: ExecutionResult & { stringify: () => string } = { stringify: () => `{"data":${data}}` };
    setResultAndStopExecution(result);
  },
};
