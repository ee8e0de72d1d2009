import { z } from 'zod';
import type { Prisma } from '../../../generated/prisma/client.js';
import { getAgent } from '../../agents/agents.js';
import type { AgentQuery } from '../../agents/store.js';
import { setBookingCalendar } from '../../agents/store.js';
import { actFor } from '../../campaigns/actor.js';
import { getCampaign, type CampaignQuery } from '../../campaigns/campaigns.js';
import { EDITABLE_STATUSES, lockCampaign, refusal } from '../../campaigns/states.js';
import { setCallTools } from '../../campaigns/store.js';
import type { ServiceContext } from '../../context.js';
import { ValidationError } from '../../errors.js';
import { INVALID_PHONE_MESSAGE, toE164 } from '../../phone.js';
import { defaultCountryOf } from '../../users/store.js';
import { parseInput, type RawInput } from '../../validation.js';
import { bookingCalendarInput } from '../booking/calendar.js';

// What a campaign and an agent say about the in-call tools: the booking calendar appointments are
// booked on (the campaign's own over its agent's) and the number a campaign's calls may be transferred to.

const campaignToolsInput = z.object({
  booking_calendar: bookingCalendarInput.nullable().optional(),
  transfer_number: z.string().trim().min(1).max(32).nullable().optional(),
});
export type CampaignToolsInput = RawInput<typeof campaignToolsInput>;

/**
 * Sets a draft, paused or running campaign's booking calendar and transfer number (null clears one;
 * one left out stays). A running campaign's calls use the new values from their next tool call.
 */
export async function setCampaignCallTools<Q extends CampaignQuery = {}>(
  ctx: ServiceContext,
  id: string,
  raw: CampaignToolsInput,
  query: Q = {} as Q,
): Promise<Prisma.CampaignGetPayload<Q>> {
  await getCampaign(ctx, id, { select: { id: true } });
  const input = parseInput(campaignToolsInput, raw);
  let transferNumber = input.transfer_number;
  if (transferNumber) {
    transferNumber = toE164(transferNumber, await defaultCountryOf(ctx.db, ctx.user.id));
    if (!transferNumber) throw ValidationError.field('transfer_number', INVALID_PHONE_MESSAGE);
  }
  await ctx.sql.transaction(async (tx) => {
    await actFor(tx, ctx);
    const campaign = await lockCampaign(tx, id);
    if (!EDITABLE_STATUSES.includes(campaign.status))
      throw refusal(campaign.status, 'Only draft, paused and running campaigns can be edited.');
    await setCallTools(tx, id, { bookingCalendar: input.booking_calendar, transferNumber });
  });
  ctx.events.publish({ kind: 'campaign', campaignId: id });
  return getCampaign(ctx, id, query);
}

/** Sets (null: clears) an agent's booking calendar, which its campaigns without one of their own book on. */
export async function setAgentBookingCalendar<Q extends AgentQuery = {}>(
  ctx: ServiceContext,
  id: string,
  raw: unknown,
  query: Q = {} as Q,
): Promise<Prisma.AgentGetPayload<Q>> {
  await getAgent(ctx, id, { select: { id: true } });
  const calendar = raw === null || raw === undefined ? null : parseInput(bookingCalendarInput, raw);
  await ctx.sql.transaction((tx) => setBookingCalendar(tx, ctx.user.id, id, calendar));
  return getAgent(ctx, id, query);
}
