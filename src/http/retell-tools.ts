import type { Context } from 'hono';
import { readRawBody } from './body.js';
import { errorResponse, json } from './errors.js';
import type { ServiceEnv } from '../services/context.js';
import { RetellSignatureError, type RetellWebhookSettings } from '../services/voice/providers/retell/callbacks.js';
import { retellToolRequest } from '../services/voice/tools/retell.js';
import { runInCallTool } from '../services/voice/tools/run.js';
import { scopeOf } from './request-scope.js';

export interface RetellToolsDeps extends ServiceEnv {
  maxBodyBytes: number;
  retell: RetellWebhookSettings | undefined;
}

/**
 * POST /voice/retell/tools/:name: Retell's custom function calls during a call. The signature is the
 * credential (401 without a good one); the call must be one of ours (404) and under way (409). Every
 * answer the LLM should read, a refusal it can act on included, is a 200 with the tool's JSON.
 */
export function retellTools(deps: RetellToolsDeps) {
  return async (c: Context): Promise<Response> => {
    const log = scopeOf(c).log.child({ tool: c.req.param('name') });
    if (!deps.retell) return json(503, { detail: 'Retell is not configured (RETELL_WEBHOOK_KEY).' });
    try {
      const payload = await readRawBody(c.req.raw, deps.maxBodyBytes);
      const request = retellToolRequest(payload, c.req.header('x-retell-signature'), deps.retell, deps.clock.now(), c.req.param('name')!);
      return json(200, await runInCallTool({ ...deps, log }, request));
    } catch (error) {
      if (error instanceof RetellSignatureError) return json(401, { detail: error.fieldErrors['x-retell-signature']![0] });
      return errorResponse(error, log);
    }
  };
}
