import { z } from 'zod';
import type { CallAttempt, Campaign, Contact } from '../../generated/prisma/client.js';
import { CallStatus, Sentiment } from '../../generated/prisma/enums.js';
import { datetime, id, iso } from './common.js';

// The v1 call history item, which is also the single contact attempt (contract 2.6). Its fields are
// camelCase, unlike most of v1.

export const v1CallHistoryItem = z
  .object({
    id,
    contactId: id,
    campaignId: id,
    contactName: z.string().describe('"First Last" of the contact; empty when the row had no name, or the contact was erased.'),
    phoneNumber: z.string().describe('The number dialed, in E.164; empty once the contact was erased.'),
    campaignName: z.string(),
    callStatus: z.enum(CallStatus),
    durationSeconds: z.int().describe('Length of the call; 0 until it has ended, and for calls that never connected.'),
    summary: z.string().describe('What the call was about; empty when there was no conversation.'),
    sentiment: z.enum(Sentiment),
    createdAt: datetime.describe('When the call was dialed.'),
  })
  .meta({ id: 'CallHistoryItem' });

/** The relations a call history item shows, joined in the same statement. */
export const v1CallInclude = { contact: { select: { name: true } }, campaign: { select: { name: true } } };

type CallWithNames = CallAttempt & { contact: Pick<Contact, 'name'>; campaign: Pick<Campaign, 'name'> };

export function toV1CallHistoryItem(call: CallWithNames): z.input<typeof v1CallHistoryItem> {
  return {
    id: call.id,
    contactId: call.contactId,
    campaignId: call.campaignId,
    contactName: call.contact.name,
    phoneNumber: call.toNumber ?? '',
    campaignName: call.campaign.name,
    callStatus: call.status,
    durationSeconds: call.durationSeconds ?? 0,
    summary: call.summary ?? '',
    sentiment: call.sentiment,
    createdAt: iso(call.createdAt),
  };
}
