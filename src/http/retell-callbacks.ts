import type { Context } from 'hono';
import { readRawBody } from './body.js';
import { errorResponse, json } from './errors.js';
import type { ServiceEnv } from '../services/context.js';
import { acceptRetellEvent, verifiedRetellEvent, type RetellWebhookSettings } from '../services/voice/providers/retell/callbacks.js';
import { scopeOf } from './request-scope.js';

export interface RetellWebhookDeps extends ServiceEnv {
  maxBodyBytes: number;
  retell: RetellWebhookSettings | undefined;
}

/**
 * POST /webhooks/retell: no bearer token, the signature is the credential. Answers 200 for every event
 * it verified (applied, repeated or of no use), 400 for a bad or stale signature or a body that is not a
 * Retell event, so that Retell shows and retries those.
 */
export function retellCallbacks(deps: RetellWebhookDeps) {
  return async (c: Context): Promise<Response> => {
    const log = scopeOf(c).log.child({ webhook: 'retell' });
    // 503 rather than 404 so that Retell keeps retrying until the key is configured.
    if (!deps.retell) return json(503, { detail: 'Retell webhooks are not configured (RETELL_WEBHOOK_KEY).' });
    try {
      const payload = await readRawBody(c.req.raw, deps.maxBodyBytes);
      const event = verifiedRetellEvent(payload, c.req.header('x-retell-signature'), deps.retell, deps.clock.now());
      const result = await acceptRetellEvent({ ...deps, log }, event, deps.retell);
      log.info({ callId: event.call.call_id, event: event.event, result }, 'retell event received');
      return json(200, { received: true, result });
    } catch (error) {
      return errorResponse(error, log);
    }
  };
}
