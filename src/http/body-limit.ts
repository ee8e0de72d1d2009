import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { json } from './errors.js';

/**
 * A declared length is checked as it is: node's parser reads no more than that, and leaving the body
 * alone keeps node-server's direct read of it (hono's bodyLimit asks for the body as a stream, which
 * builds a full Request, about a tenth of a small query's CPU). A body of no declared length is counted
 * as it arrives, by bodyLimit.
 */
export function declaredBodyLimit(maxSize: number): MiddlewareHandler {
  const onError = () => json(413, { errors: [{ message: 'Request body is too large.', extensions: { code: 'PAYLOAD_TOO_LARGE' } }] });
  const streamed = bodyLimit({ maxSize, onError });
  return async (c, next) => {
    const declared = c.req.header('content-length');
    if (declared === undefined || c.req.header('transfer-encoding') !== undefined || !/^\d+$/.test(declared)) return streamed(c, next);
    if (Number(declared) > maxSize) return onError();
    await next();
  };
}
