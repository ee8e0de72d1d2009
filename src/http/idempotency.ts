import type { MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import type { Authenticator } from '../services/auth.js';
import type { Principal, ServiceEnv } from '../services/context.js';
import {
  IDEMPOTENCY_HEADER,
  keptForCaller,
  readKey,
  REPLAYED_HEADER,
  requestFingerprint,
  runOnce,
  type KeptResponse,
} from '../services/idempotency/idempotency.js';
import { readRawBody } from './body.js';
import { scopeOf } from './request-scope.js';

// The HTTP side of idempotency keys (services/idempotency): a POST with the header is authenticated here
// (keys are per customer, answers per credential), its body read whole to be compared, and its response
// kept or replayed. A caller whose requests are never kept (a read-only key) goes straight to the
// handler, which authorizes it as any request: no replay is looked up for it.

/** What a surface says about its own answers. */
export interface IdempotentSurface {
  /** Whether an answer changed something, and so is kept for the key's repeats. */
  changed(status: number, body: string): boolean;
  /** The surface's own shape for a refusal (a bad or reused key, a first request still running). */
  refusal(error: unknown, log: Logger): Response;
}

/** `maxBodyBytes`: the largest body any endpoint behind it takes, the most it buffers. */
export function idempotentRequests(
  deps: { env: ServiceEnv; authenticator: Authenticator },
  surface: IdempotentSurface,
  maxBodyBytes: number,
): MiddlewareHandler {
  return async (c, next) => {
    const raw = c.req.header(IDEMPOTENCY_HEADER);
    if (c.req.method !== 'POST' || raw === undefined) return next();
    let user: Principal;
    try {
      user = await deps.authenticator.authenticate(c.req.header('authorization'));
    } catch {
      // Its handler answers it, as any request without valid credentials.
      return next();
    }
    if (!keptForCaller(user)) return next();
    const { log } = scopeOf(c);
    try {
      const key = readKey(raw);
      const contentType = c.req.header('content-type') ?? '';
      const body = await readRawBody(c.req.raw, maxBodyBytes);
      // The body was read to be compared; the handler reads this copy of it.
      c.req.raw = new Request(c.req.url, { method: 'POST', headers: c.req.raw.headers, body });
      const url = new URL(c.req.url);
      const fingerprint = requestFingerprint({ method: 'POST', path: url.pathname + url.search, contentType, body });
      const outcome = await runOnce(deps.env, user, key, fingerprint, async () => {
        await next();
        return kept(c.res, surface, (response) => (c.res = response));
      });
      if ('replayed' in outcome) return replay(outcome.replayed);
      return c.res;
    } catch (error) {
      return surface.refusal(error, log);
    }
  };
}

/**
 * The response as kept, when it changed something; a stream (a subscription, a GraphQL answer in parts) is
 * never kept, nor held back.
 */
async function kept(
  response: Response,
  surface: IdempotentSurface,
  replace: (response: Response) => void,
): Promise<KeptResponse | undefined> {
  const contentType = response.headers.get('content-type');
  if (contentType?.startsWith('text/event-stream') || contentType?.startsWith('multipart/mixed')) return undefined;
  const body = await response.text();
  replace(new Response(body, { status: response.status, headers: response.headers }));
  return surface.changed(response.status, body) ? { status: response.status, contentType, body } : undefined;
}

function replay(response: KeptResponse): Response {
  const headers: Record<string, string> = { [REPLAYED_HEADER]: 'true' };
  if (response.contentType) headers['content-type'] = response.contentType;
  return new Response(response.body, { status: response.status, headers });
}
