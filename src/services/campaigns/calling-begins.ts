import type { Campaign } from '../../generated/prisma/client.js';
import { gate } from '../compliance/gate.js';
import type { ServiceContext } from '../context.js';
import { windowOf } from '../dialer/window.js';
import { waitingPlaces } from './store.js';

// When a started campaign places its first call: the earliest moment one of the contacts it still has to
// call is due, inside the campaign's calling window in that contact's zone and allowed by the regional
// rules of the contact's place, the same gate the dialer asks before each call. A campaign dispatched at
// night says when the morning's calls begin instead of saying nothing for hours.

/** Places are grouped by zone, region and area code: a few hundred cover any real list. */
const MAX_PLACES = 500;

type Schedule = Pick<
  Campaign,
  'id' | 'status' | 'startedAt' | 'timezone' | 'callingHours' | 'activeDays' | 'requiredConsent' | 'regionalRules'
>;

/** Null when the campaign is not running or scheduled, or has nobody left to call. */
export async function callingBeginsAt(ctx: Pick<ServiceContext, 'sql' | 'clock'>, campaign: Schedule): Promise<Date | null> {
  if (campaign.status !== 'running' && campaign.status !== 'scheduled') return null;
  const now = ctx.clock.now();
  const from = campaign.startedAt && campaign.startedAt > now ? campaign.startedAt : now;
  const rules = {
    timezone: campaign.timezone,
    window: windowOf(campaign.callingHours, campaign.activeDays),
    requiredConsent: campaign.requiredConsent,
    regionalRules: campaign.regionalRules,
  };
  let earliest: Date | null = null;
  for (const place of await waitingPlaces(ctx.sql, campaign.id, MAX_PLACES)) {
    const due = place.dueAt && place.dueAt > from ? place.dueAt : from;
    // Consent is the contact's own business, not the place's: every required one is taken as held.
    const verdict = gate(due, rules, { ...place, consents: campaign.requiredConsent });
    const at = verdict.kind === 'call' ? due : verdict.kind === 'later' ? verdict.until : null;
    if (at && (!earliest || at < earliest)) earliest = at;
  }
  return earliest;
}
