import type { Context } from 'hono';
import type { z } from 'zod';
import { readRawBody } from './body.js';
import { errorResponse, json } from './errors.js';
import type { ServiceEnv } from '../services/context.js';
import {
  acceptTwilioStatus,
  answerTwilioCall,
  verifiedTwilioRequest,
  type TwilioRequest,
  type TwilioWebhookSettings,
} from '../services/voice/providers/twilio/callbacks.js';
import { statusQuery, TWILIO_STATUS_PATH, TWILIO_VOICE_PATH, voiceQuery } from '../services/voice/providers/twilio/urls.js';
import { scopeOf } from './request-scope.js';

export interface TwilioWebhookDeps extends ServiceEnv {
  maxBodyBytes: number;
  twilio: TwilioWebhookSettings | undefined;
}

// 503 rather than 404 so that a misconfigured deployment shows in Twilio's debugger as ours to fix.
const NOT_CONFIGURED = { detail: 'Twilio webhooks are not configured (TWILIO_AUTH_TOKEN, PUBLIC_BASE_URL, TWILIO_AGENT_STREAM_URL).' };

/** The request's query exactly as sent (the signature covers it byte for byte), with its `?`. */
function searchOf(url: string): string {
  const at = url.indexOf('?');
  return at < 0 ? '' : url.slice(at);
}

/** The request read within the body limit, verified, and its call and query parsed. */
async function twilioRequest<Q extends z.ZodType>(
  c: Context,
  settings: TwilioWebhookSettings,
  maxBodyBytes: number,
  path: string,
  query: Q,
): Promise<TwilioRequest<z.output<Q>>> {
  const body = await readRawBody(c.req.raw, maxBodyBytes);
  return verifiedTwilioRequest(
    settings,
    { path, search: searchOf(c.req.url), contentType: c.req.header('content-type'), body, signature: c.req.header('x-twilio-signature') },
    query,
  );
}

/**
 * POST /webhooks/twilio/voice: no bearer token, the signature is the credential. Answers TwiML for a
 * verified request; 400 (field errors) for a bad signature or parameters that are not Twilio's, which
 * Twilio shows in its debugger (and the callee hears its application error).
 */
export function twilioVoiceCallback(deps: TwilioWebhookDeps) {
  return async (c: Context): Promise<Response> => {
    const log = scopeOf(c).log.child({ webhook: 'twilio-voice' });
    if (!deps.twilio) return json(503, NOT_CONFIGURED);
    try {
      const request = await twilioRequest(c, deps.twilio, deps.maxBodyBytes, TWILIO_VOICE_PATH, voiceQuery);
      const twiml = await answerTwilioCall({ ...deps, log }, request, deps.twilio);
      log.info(
        { callSid: request.call.CallSid, answeredBy: request.call.AnsweredBy, attemptId: request.query.attempt_id },
        'twilio call answered',
      );
      return new Response(twiml, { status: 200, headers: { 'content-type': 'text/xml; charset=utf-8' } });
    } catch (error) {
      return errorResponse(error, log);
    }
  };
}

/**
 * POST /webhooks/twilio/status: answers 200 for every status it verified (applied, repeated or of no
 * use), 400 for a bad signature or parameters that are not Twilio's.
 */
export function twilioStatusCallback(deps: TwilioWebhookDeps) {
  return async (c: Context): Promise<Response> => {
    const log = scopeOf(c).log.child({ webhook: 'twilio-status' });
    if (!deps.twilio) return json(503, NOT_CONFIGURED);
    try {
      const request = await twilioRequest(c, deps.twilio, deps.maxBodyBytes, TWILIO_STATUS_PATH, statusQuery);
      const result = await acceptTwilioStatus({ ...deps, log }, request);
      log.info({ callSid: request.call.CallSid, status: request.call.CallStatus, result }, 'twilio status received');
      return json(200, { received: true, result });
    } catch (error) {
      return errorResponse(error, log);
    }
  };
}
