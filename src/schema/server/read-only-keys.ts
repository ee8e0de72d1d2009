import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { refuseWritesWithReadKey } from '../../services/api-keys/api-keys.js';
import { ForbiddenError } from '../../services/errors.js';
import type { GraphQLContext } from '../context.js';
import { graphQLErrorOf } from '../errors.js';

/** A read-only API key runs queries and subscriptions; a mutation is refused (FORBIDDEN) before it runs. */
export const readOnlyKeys: Plugin<GraphQLContext> = {
  onExecute({ args, setResultAndStopExecution }) {
    const operation = getOperationAST(args.document, args.operationName);
    try {
      refuseWritesWithReadKey(args.contextValue.user, operation?.operation === 'mutation');
    } catch (error) {
      if (!(error instanceof ForbiddenError)) throw error;
      setResultAndStopExecution({ errors: [graphQLErrorOf(args.contextValue.service.log, error)] });
    }
  },
};
