import { z } from 'zod';
import { attemptIdOf, retellCall } from '../providers/retell/calls.js';
import { verifiedRetellBody, type RetellWebhookSettings } from '../providers/retell/callbacks.js';
import { ValidationError } from '../../errors.js';
import type { ToolRequest } from './run.js';

// A Retell custom function request: POST with the tool's name, the call object (with our attempt id in
// its metadata) and the LLM's arguments, signed as Retell signs its webhooks.

const retellToolBody = z.object({
  name: z.string().max(64).optional(),
  call: retellCall.extend({ agent_id: z.string().max(128).nullish() }),
  args: z.unknown().optional(),
});

/** The tool request a verified Retell custom function call makes for the tool at `name` (the URL's). */
export function retellToolRequest(
  payload: Uint8Array,
  signature: string | undefined,
  settings: RetellWebhookSettings,
  now: Date,
  name: string,
): ToolRequest {
  const body = verifiedRetellBody(payload, signature, settings, now, retellToolBody);
  if (body.name !== undefined && body.name !== name) throw ValidationError.field('name', 'Does not name the tool of this URL.');
  return {
    name,
    args: body.args,
    attemptId: attemptIdOf(body.call),
    providerCallId: body.call.call_id,
    providerAgentId: body.call.agent_id ?? null,
  };
}
