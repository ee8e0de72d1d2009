import { GraphQLError, type ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';

// One convention for every error /graphql answers, whichever media type the client accepts
// (docs/decisions.md, "One GraphQL error shape"):
// - every error carries `extensions.code`;
// - a request that did not run (no `data`, and errors that name no field: a body that is no GraphQL
//   request, a parse error, a validation failure, variables that do not fit, an unknown operation, a
//   refused credential or budget) answers a 4xx: the error's own status (401, 403, 405, 413, 415, 429),
//   else 400;
// - a request that ran answers 200, `data` beside the errors of the fields that failed (a subscription
//   whose field refused to start has no `data`, and its error names the field).
// Yoga marks the spec's request errors so that they answer 200 to `application/json`; here they answer
// as they do to `application/graphql-response+json`, as every other refused input does on both surfaces.

type HttpExtension = { status?: number; headers?: Record<string, string>; spec?: boolean };

/** A code for an error raised without one, by what raised it. */
function codeOf(error: GraphQLError, ran: boolean): string {
  if (ran) return 'INTERNAL_SERVER_ERROR';
  if (error.message.startsWith('Syntax Error')) return 'GRAPHQL_PARSE_FAILED';
  // graphql-js's validation rules point at the document; a request's own problems (no query, an unknown
  // operation name) do not.
  return error.locations?.length ? 'GRAPHQL_VALIDATION_FAILED' : 'BAD_REQUEST';
}

function shaped(error: GraphQLError, ran: boolean): GraphQLError {
  const { code, http, ...rest } = error.extensions as { code?: string; http?: HttpExtension };
  const refusal = ran ? undefined : { ...http, status: http?.status ?? 400 };
  if (refusal) delete refusal.spec;
  if (code && !refusal) return error;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: error.originalError,
    extensions: { ...rest, code: code ?? codeOf(error, ran), ...(refusal ? { http: refusal } : http ? { http } : {}) },
  });
}

function shapedResult(result: ExecutionResult): ExecutionResult {
  if (!result.errors?.length) return result;
  const ran = result.data !== undefined || result.errors.some((error) => error.path !== undefined);
  return { ...result, errors: result.errors.map((error) => shaped(error, ran)) };
}

export const errorShape: Plugin = {
  onResultProcess({ result, setResult }) {
    // Streams (subscriptions, @defer) answer 200 before their events; each event's errors keep their codes.
    if (isAsyncIterable(result)) return;
    setResult(Array.isArray(result) ? result.map(shapedResult) : shapedResult(result as ExecutionResult));
  },
};
