import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { BREAK, getOperationAST, GraphQLError, visit, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { IDEMPOTENCY_HEADER } from '../../services/idempotency/idempotency.js';

// @defer and @stream: the answer comes in parts, the first as soon as the fields not deferred are
// resolved, over multipart/mixed or text/event-stream (whichever the client accepts). A client that
// accepts only JSON is answered 406.

/** Whether a document asks for part of its answer later. */
export function deliversIncrementally(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Directive(node) {
      if (node.name.value !== 'defer' && node.name.value !== 'stream') return undefined;
      found = true;
      return BREAK;
    },
  });
  return found;
}

/**
 * Adds the directives, and refuses them in a mutation sent with an Idempotency-Key: a key's answer is kept
 * whole to be replayed, and an answer in parts is a stream, which is never kept.
 */
export function deferStream(): Plugin {
  return {
    ...useDeferStream(),
    onExecute({ args, setResultAndStopExecution }) {
      const { request } = args.contextValue as { request?: Request };
      if (!request?.headers.has(IDEMPOTENCY_HEADER) || !deliversIncrementally(args.document)) return;
      if (getOperationAST(args.document, args.operationName)?.operation !== 'mutation') return;
      setResultAndStopExecution({
        errors: [
          new GraphQLError(`A mutation sent with an ${IDEMPOTENCY_HEADER} is answered whole: remove @defer and @stream.`, {
            extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
          }),
        ],
      });
    },
  };
}
