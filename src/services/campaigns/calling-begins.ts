import { ConsentKind, type Campaign } from '../../generated/prisma/client.js';
import { gate, type GateCampaign, type Verdict } from '../calling-rules/gate.js';
import type { LaterReason } from '../calling-rules/gate.js';
import type { ServiceContext } from '../context.js';
import { windowOf, type CallingWindow } from '../calling-rules/window.js';
import { regionalRulesApply } from './exemptions.js';
import { exemptionAt, waitingContact, waitingPlaces, type WaitingContact, type WaitingPlace } from './store.js';

// When a started campaign places its first call: the earliest moment one of the contacts it still has to
// call is due, inside the campaign's calling window in that contact's zone and allowed by the regional
// rules of the contact's place, the same gate the dialer asks before each call. A campaign dispatched at
// night says when the morning's calls begin instead of saying nothing for hours, and why it waits.

/** Places are grouped by zone, region and area code: a few hundred cover any real list. */
const MAX_PLACES = 500;

type Schedule = Pick<
  Campaign,
  'id' | 'userId' | 'status' | 'startedAt' | 'timezone' | 'callingHours' | 'activeDays' | 'requiredConsent' | 'regionalRules'
>;

type Ctx = Pick<ServiceContext, 'sql' | 'clock'>;

/** One thing that holds a campaign's first call back. */
export type Wait =
  /** The contact is not due before `until`: its retry policy, a callback it asked for, or a provider that asked to wait. */
  | { kind: 'contact'; until: Date; contact: WaitingContact }
  /** The campaign's own calling hours and days, read in the callee's zone. */
  | { kind: 'calling_hours'; zone: string; window: CallingWindow }
  /** The regional calling rules of the callee's place. */
  | { kind: 'regional_rules'; reason: LaterReason; region: string };

export interface FirstCall {
  at: Date;
  /** What holds the call back until `at`, in the order it applies; empty when nothing but the start does. */
  waits: Wait[];
}

interface Earliest {
  at: Date;
  /** Now, or the campaign's start when it is ahead. */
  from: Date;
  /** When the place's first contact is due: its own next attempt, or `from`. */
  due: Date;
  place: WaitingPlace;
  verdict: Verdict;
  rules: GateCampaign;
}

/** Null when the campaign is not running or scheduled, or has nobody left to call. */
export async function callingBeginsAt(ctx: Ctx, campaign: Schedule): Promise<Date | null> {
  return (await earliest(ctx, campaign))?.at ?? null;
}

/** When the first call is due and why not sooner (see Wait); null as for callingBeginsAt. */
export async function firstCall(ctx: Ctx, campaign: Schedule): Promise<FirstCall | null> {
  const first = await earliest(ctx, campaign);
  if (!first) return null;
  const { at, from, due, place, verdict, rules } = first;
  const waits: Wait[] = [];
  if (due > from) {
    const contact = await waitingContact(ctx.sql, campaign.id, place, due);
    // A contact never called nor asking for a callback is due later because a tick found the gate
    // closed and set it aside: the gate's reason is the real one while it still holds.
    const setAside = contact && contact.attempts === 0 && !contact.callbackAt ? gateAt(from, rules, place) : null;
    if (setAside?.kind === 'later') waits.push(waitOf(setAside, rules, place));
    else if (contact) waits.push({ kind: 'contact', until: due, contact });
  }
  if (verdict.kind === 'later') waits.push(waitOf(verdict, rules, place));
  return { at, waits };
}

async function earliest(ctx: Ctx, campaign: Schedule): Promise<Earliest | null> {
  if (campaign.status !== 'running' && campaign.status !== 'scheduled') return null;
  const now = ctx.clock.now();
  const from = campaign.startedAt && campaign.startedAt > now ? campaign.startedAt : now;
  const rules: GateCampaign = {
    timezone: campaign.timezone,
    window: windowOf(campaign.callingHours, campaign.activeDays),
    requiredConsent: campaign.requiredConsent,
    regionalRules: regionalRulesApply(
      campaign.regionalRules,
      !campaign.regionalRules && (await exemptionAt(ctx.sql, campaign.userId, now)) !== undefined,
    ),
  };
  let first: Earliest | null = null;
  for (const place of await waitingPlaces(ctx.sql, campaign.id, MAX_PLACES)) {
    const due = place.dueAt && place.dueAt > from ? place.dueAt : from;
    const verdict = gateAt(due, rules, place);
    const at = verdict.kind === 'call' ? due : verdict.kind === 'later' ? verdict.until : null;
    if (at && (!first || at < first.at)) first = { at, from, due, place, verdict, rules };
  }
  return first;
}

// Consent is the contact's own business, not the place's: every kind (the campaign's, a region's) is taken as held.
const EVERY_CONSENT = Object.values(ConsentKind);
const gateAt = (at: Date, rules: GateCampaign, place: WaitingPlace): Verdict => gate(at, rules, { ...place, consents: EVERY_CONSENT });

function waitOf(verdict: Extract<Verdict, { kind: 'later' }>, rules: GateCampaign, place: WaitingPlace): Wait {
  return verdict.reason
    ? { kind: 'regional_rules', reason: verdict.reason, region: verdict.detail }
    : { kind: 'calling_hours', zone: place.timezone ?? rules.timezone, window: rules.window };
}
