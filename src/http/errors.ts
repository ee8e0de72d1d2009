import type { Logger } from 'pino';
import {
  AppError,
  AuthenticationError,
  concurrentChangeError,
  ConflictError,
  NON_FIELD,
  RateLimitedError,
  ValidationError,
  type ErrorCode,
} from '../services/errors.js';
import { jsonBody } from './json-text.js';

// The service error catalogue as Django REST Framework bodies, which v1 clients were written against.

const STATUS: Record<ErrorCode, number> = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  BAD_USER_INPUT: 400,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
};

/** The HTTP status of a catalogued error, the same on both surfaces. */
export const httpStatusOf = (error: AppError): number => STATUS[error.code];

export const WWW_AUTHENTICATE = 'Bearer realm="api"';

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(jsonBody(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

export function errorResponse(caught: unknown, log: Logger): Response {
  const error = caught instanceof AppError ? caught : concurrentChangeError(caught);
  if (!error) {
    log.error({ err: caught }, 'unexpected error in REST handler');
    return json(500, { detail: 'A server error occurred.' });
  }
  if (error !== caught) log.warn({ err: caught }, 'concurrent change');
  const status = STATUS[error.code];
  if (error instanceof ValidationError) return json(status, error.fieldErrors);
  if (error instanceof AuthenticationError) {
    return json(status, authenticationBody(error), { 'www-authenticate': WWW_AUTHENTICATE });
  }
  if (error instanceof RateLimitedError) {
    return json(status, { detail: error.message }, { 'retry-after': String(error.retryAfterSeconds) });
  }
  if (error instanceof ConflictError && error.reason) {
    return json(status, { ...error.extra, detail: error.message, reason: error.reason });
  }
  return json(status, { detail: error.message });
}

/** DRF simplejwt's bodies: an expired token keeps the invalid one's detail and says why in `messages`. */
function authenticationBody(error: AuthenticationError) {
  if (error.reason === 'missing') return { detail: error.message };
  const body = { detail: new AuthenticationError('invalid').message, code: 'token_not_valid' };
  if (error.reason === 'invalid') return body;
  return { ...body, messages: [{ token_class: 'AccessToken', token_type: 'access', message: error.message }] };
}

export function badRequest(detail: string): Response {
  return json(400, { [NON_FIELD]: [detail] });
}
