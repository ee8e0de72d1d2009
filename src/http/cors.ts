import type { MiddlewareHandler } from 'hono';

/**
 * A request a browser sends without a preflight (a GET, a multipart upload) must carry this header (any
 * value) for GraphQL to run it; a page can only add it after a preflight that CORS_ORIGINS allows.
 */
export const CSRF_HEADER = 'X-GraphQL-Yoga-CSRF';

/** Origins whose pages may call the API from a browser: `*` for any, an empty list for none. */
export type CorsOrigins = '*' | readonly string[];

const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE';
const ALLOWED_HEADERS = `Authorization, Content-Type, ${CSRF_HEADER}, X-Request-Id`;
const EXPOSED_HEADERS = 'Retry-After, X-Request-Id';
const PREFLIGHT_CACHE_SECONDS = '600';

const allowedOrigin = (origins: CorsOrigins, origin: string | undefined) => {
  if (origin === undefined) return undefined;
  if (origins === '*') return '*';
  return origins.includes(origin) ? origin : undefined;
};

/** The CORS headers of an answer (not a preflight's) to a request from `origin`. */
export function corsAnswerHeaders(origins: CorsOrigins, origin: string | undefined): [string, string][] {
  const headers: [string, string][] = [];
  // The answer depends on the origin unless every origin is allowed: caches must keep them apart.
  if (origins !== '*') headers.push(['Vary', 'Origin']);
  const allowed = allowedOrigin(origins, origin);
  if (allowed) headers.push(['Access-Control-Allow-Origin', allowed], ['Access-Control-Expose-Headers', EXPOSED_HEADERS]);
  return headers;
}

/**
 * Cross-origin access for browsers, the same on GraphQL and on v1. Tokens travel in the Authorization
 * header, never in cookies, so no response allows credentials: a page from an allowed origin must hold
 * the token itself, and no other page can borrow the browser's.
 */
export function cors(origins: CorsOrigins): MiddlewareHandler {
  return async (c, next) => {
    const origin = c.req.header('origin');
    const preflight = c.req.method === 'OPTIONS' && c.req.header('access-control-request-method') !== undefined;
    if (preflight) {
      const headers = new Headers();
      if (origins !== '*') headers.set('Vary', 'Origin');
      const allowed = allowedOrigin(origins, origin);
      if (allowed) {
        headers.set('Access-Control-Allow-Origin', allowed);
        headers.set('Access-Control-Allow-Methods', ALLOWED_METHODS);
        headers.set('Access-Control-Allow-Headers', ALLOWED_HEADERS);
        headers.set('Access-Control-Max-Age', PREFLIGHT_CACHE_SECONDS);
      }
      return new Response(null, { status: 204, headers });
    }
    await next();
    for (const [name, value] of corsAnswerHeaders(origins, origin)) {
      if (name === 'Vary') c.res.headers.append(name, value);
      else c.res.headers.set(name, value);
    }
  };
}
