import { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { AppError, concurrentChangeError, ConflictError, RateLimitedError, ValidationError } from '../services/errors.js';

/** Maps the service error catalogue onto `extensions.code`; anything unexpected is logged and masked. */
export function maskGraphQLError(log: Logger) {
  return (error: unknown): Error => {
    if (!(error instanceof GraphQLError)) return unexpected(log, error);
    const caught = error.originalError;
    const known = caught instanceof AppError ? caught : concurrentChangeError(caught);
    if (known) {
      if (known !== caught) log.warn({ err: caught, path: error.path }, 'concurrent change');
      return new GraphQLError(known.message, {
        nodes: error.nodes,
        source: error.source,
        positions: error.positions,
        path: error.path,
        extensions: { code: known.code, ...details(known) },
      });
    }
    // Errors GraphQL itself raised (syntax, validation, variable coercion) are the client's to see.
    if (!caught) return error;
    // A GraphQL error thrown while running is about the request (Pothos's argument checks: an invalid
    // cursor, `before` with `after`): the client's input, not the server's fault.
    if (caught instanceof GraphQLError) {
      if (error.extensions.code) return error;
      return new GraphQLError(error.message, {
        nodes: error.nodes,
        source: error.source,
        positions: error.positions,
        path: error.path,
        extensions: { ...error.extensions, code: 'BAD_USER_INPUT' },
      });
    }
    return unexpected(log, caught, error);
  };
}

/** An error thrown outside execution (a plugin's refusal) as the GraphQL error a resolver's would become. */
export function graphQLErrorOf(log: Logger, error: unknown): GraphQLError {
  const message = error instanceof Error ? error.message : 'Unexpected error.';
  return maskGraphQLError(log)(new GraphQLError(message, { originalError: error as Error })) as GraphQLError;
}

function details(error: AppError): Record<string, unknown> {
  if (error instanceof ValidationError) return { fieldErrors: error.fieldErrors };
  if (error instanceof ConflictError && error.reason) return { reason: error.reason };
  if (error instanceof RateLimitedError) {
    // Yoga answers with the status and headers under `http`, and leaves them out of the body.
    const retryAfter = String(error.retryAfterSeconds);
    return { retryAfterSeconds: error.retryAfterSeconds, http: { status: 429, headers: { 'Retry-After': retryAfter } } };
  }
  return {};
}

function unexpected(log: Logger, cause: unknown, error?: GraphQLError): GraphQLError {
  log.error({ err: cause, path: error?.path }, 'unexpected error in GraphQL execution');
  return new GraphQLError('Unexpected error.', {
    nodes: error?.nodes,
    path: error?.path,
    extensions: { code: 'INTERNAL_SERVER_ERROR' },
  });
}
