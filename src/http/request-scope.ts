import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { HttpBindings } from '@hono/node-server';
import type { Context, MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';

/** What one HTTP request carries through both surfaces: its id, a logger stamping it, the caller once known. */
export interface RequestScope {
  readonly requestId: string;
  readonly log: Logger;
  /** Set by authentication, for the access log. */
  userId?: string;
  /**
   * Set when the GraphQL lean lane already spent the caller's budgets for this request and handed it to
   * the full path: its refusal, or null when they allowed it. The full path then spends nothing again.
   */
  spentBudgets?: Error | null;
  /** Set when the lean lane ran the compiled read and it did not answer: the full path goes to the resolvers. */
  compiledReadDeclined?: boolean;
}

export const REQUEST_ID_HEADER = 'X-Request-Id';

// An id from a proxy or client is kept only when it looks like one: short, and with no characters that
// could forge a log line or a header.
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const current = new AsyncLocalStorage<RequestScope>();

// A request the GraphQL lean lane began and handed to the full path keeps the scope it was given.
const handedOver = new WeakMap<IncomingMessage, RequestScope>();

/** A request's scope, its id the caller's `X-Request-Id` when sane. */
export function newRequestScope(givenId: string | undefined, log: Logger): RequestScope {
  return new Scope(givenId && SANE_REQUEST_ID.test(givenId) ? givenId : randomUUID(), log);
}

/** Lets the full path carry on with the scope a request was given before it reached the app. */
export function handOverScope(incoming: IncomingMessage, scope: RequestScope): void {
  handedOver.set(incoming, scope);
}

/** Gives every request an id (the caller's `X-Request-Id` when sane), echoed in the response. */
export function requestScope(log: Logger): MiddlewareHandler {
  return async (c, next) => {
    const incoming = (c.env as Partial<HttpBindings> | undefined)?.incoming;
    const scope = (incoming && handedOver.get(incoming)) ?? newRequestScope(c.req.header(REQUEST_ID_HEADER), log);
    c.set('scope', scope);
    await current.run(scope, next);
    // Set on the response in place: c.header() would now wrap it in a new one, which turns a text body
    // into a stream that costs more to write.
    c.res.headers.set(REQUEST_ID_HEADER, scope.requestId);
  };
}

/**
 * Its logger is made on first use: most requests log nothing but their access line (which below the info
 * level is not written), and a child logger costs about as much as a small v1 read's routing.
 */
class Scope implements RequestScope {
  userId?: string;
  spentBudgets?: Error | null;
  compiledReadDeclined?: boolean;
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
