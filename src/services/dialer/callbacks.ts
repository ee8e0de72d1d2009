import type { ServiceContext } from '../context.js';
import { NotFoundError } from '../errors.js';
import { uuid } from '../validation.js';
import { completeIfDone } from './ended-calls.js';
import { cancelWaitingCallback } from './store/callbacks.js';

/**
 * Cancels the callback a contact asked for, before its call: the contact is done as its last call left it.
 * NotFound when the caller's campaign has no such callback waiting (none asked, already made, or its call
 * under way). The campaign completes if that was all it had left.
 */
export async function cancelCallback(ctx: ServiceContext, campaignId: string, contactId: string): Promise<void> {
  const ids = uuid.safeParse(campaignId).success && uuid.safeParse(contactId).success;
  if (!ids || !(await cancelWaitingCallback(ctx.sql, campaignId, contactId, ctx.user.id))) throw new NotFoundError('Callback');
  await completeIfDone(ctx, campaignId);
  ctx.events.publish({ kind: 'campaign', campaignId });
}
