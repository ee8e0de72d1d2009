import type { Context } from 'hono';
import { errorResponse, json } from './errors.js';
import type { ServiceEnv } from '../services/context.js';
import { runtimeConfig } from '../services/voice/runtime/config.js';
import { scopeOf } from './request-scope.js';

export const VOICE_RUNTIME_CONFIG_PATH = '/voice/runtime/config';

/** The bearer token of `Authorization`, if the header is one. */
function bearerOf(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}

/**
 * GET /voice/runtime/config: what the agent is on one call, for the voice runtime a Twilio call is
 * streamed to. The call's token (a stream parameter) is the credential: 401 without a valid one, or
 * once the call is over; 404 when its call or agent is gone. Never cached.
 */
export function voiceRuntimeConfig(deps: ServiceEnv) {
  return async (c: Context): Promise<Response> => {
    const log = scopeOf(c).log.child({ route: 'voice-runtime-config' });
    try {
      const config = await runtimeConfig({ ...deps, log }, bearerOf(c.req.header('authorization')));
      log.info({ attemptId: config.attempt_id, agentId: config.agent.id }, 'voice runtime read its call');
      return json(200, config, { 'cache-control': 'no-store' });
    } catch (error) {
      return errorResponse(error, log);
    }
  };
}
