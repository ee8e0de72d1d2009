import { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { AppError, ConflictError, RateLimitedError, ValidationError } from '../services/errors.js';

/** Maps the service error catalogue onto `extensions.code`; anything unexpected is logged and masked. */
export function maskGraphQLError(log: Logger) {
  return (error: unknown): Error => {
    if (!(error instanceof GraphQLError)) return unexpected(log, error);
    const original = error.originalError;
    if (original instanceof AppError) {
      return new GraphQLError(original.message, {
        nodes: error.nodes,
        source: error.source,
        positions: error.positions,
        path: error.path,
        extensions: { code: original.code, ...details(original) },
      });
    }
    // Errors GraphQL itself raised (syntax, validation, variable coercion) are the client's to see.
    if (!original || original instanceof GraphQLError) return error;
    return unexpected(log, original, error);
  };
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
