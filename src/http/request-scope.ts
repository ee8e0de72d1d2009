import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';

/** What one HTTP request carries through both surfaces: its id, a logger stamping it, the caller once known. */
export interface RequestScope {
  readonly requestId: string;
  readonly log: Logger;
  /** Set by authentication, for the access log. */
  userId?: string;
}

export const REQUEST_ID_HEADER = 'X-Request-Id';

// An id from a proxy or client is kept only when it looks like one: short, and with no characters that
// could forge a log line or a header.
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const current = new AsyncLocalStorage<RequestScope>();

/** Gives every request an id (the caller's `X-Request-Id` when sane), echoed in the response. */
export function requestScope(log: Logger): MiddlewareHandler {
  return async (c, next) => {
    const given = c.req.header(REQUEST_ID_HEADER);
    const requestId = given && SANE_REQUEST_ID.test(given) ? given : randomUUID();
    const scope = new Scope(requestId, log);
    c.set('scope', scope);
    await current.run(scope, next);
    // Set on the response in place: c.header() would now wrap it in a new one, which turns a text body
    // into a stream that costs more to write.
    c.res.headers.set(REQUEST_ID_HEADER, requestId);
  };
}

/**
 * Its logger is made on first use: most requests log nothing but their access line (which below the info
 * level is not written), and a child logger costs about as much as a small v1 read's routing.
 */
class Scope implements RequestScope {
  userId?: string;
  #log: Logger | undefined;

  constructor(
    readonly requestId: string,
    private readonly parent: Logger,
  ) {}

  get log(): Logger {
    return (this.#log ??= this.parent.child({ requestId: this.requestId }));
  }
}

export function scopeOf(c: Context): RequestScope {
  return c.get('scope') as RequestScope;
}

/** The request being served, for code that is handed no context of its own (yoga's error masking). */
export function currentRequestScope(): RequestScope | undefined {
  return current.getStore();
}
