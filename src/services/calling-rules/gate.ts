import type { CampaignPurpose, ConsentKind } from '../../generated/prisma/client.js';
import { isOpen, nextOpening, type CallingWindow } from './window.js';
import { calleeRegion, placeOfNumber, zonesOfRegion, type Place } from './places.js';
import { recallBlock, regionalBlock, regionalConsent, type RegionalReason } from './regional-hours.js';
import { capBlock, capsOf, type CallHistory } from './caps.js';
import { registryBlock, type RegistryCallee } from './registries.js';
import { revocationStops, type Revocation } from './revocation.js';

// The compliance gate every dial passes, first attempts and retries alike, right before the call: a
// revoked consent, the consents the campaign and the callee's regional rules require, the national
// do-not-call registries (for solicitation), then a re-call after an abandoned call, the frequency caps,
// the calling window of the campaign and the regional rules of the callee's place, in the callee's local
// time. What the gate stops is recorded with its reason.

/** Why a call waits: a regional rule of the hour or day, or a frequency cap. */
export type LaterReason = RegionalReason | 'frequency_cap';

export type BlockReason = 'do_not_call' | 'consent_missing' | 'consent_revoked' | 'registry' | LaterReason;

/** The callee as the gate sees it: the contact's own zone and region, when set, win over its number's. */
export interface Callee {
  phoneNumber: string;
  timezone: string | null;
  region: string | null;
  /** The kinds of consent the contact holds (not revoked). */
  consents: readonly ConsentKind[];
  /** The consents the contact revoked and has not given again since; none when not read. */
  revocations?: readonly Revocation[];
  /** The customer's recent calls to the number, which the frequency caps count; undefined: not read, caps not checked. */
  history?: CallHistory;
  /** What the registry rule needs, where the caller looked the number up (the dialer's claim does). */
  registry?: RegistryCallee;
  /** When the latest abandoned call to the number ended (answered, then dropped by our side), if recent. */
  lastAbandonedAt?: Date | null;
}

export interface GateCampaign {
  timezone: string;
  window: CallingWindow;
  requiredConsent: readonly ConsentKind[];
  /** Off only under an admin's exemption (campaigns/exemptions.ts): then no regional rule or cap applies. */
  regionalRules: boolean;
  /** Solicitation is held to the national do-not-call registries; informational calls are not. */
  purpose?: CampaignPurpose;
}

export type Verdict =
  | { kind: 'call' }
  /** Never to be called by this campaign. */
  | { kind: 'blocked'; reason: 'consent_missing' | 'consent_revoked' | 'registry'; detail: string }
  /** Not now: due again at `until`. A reason names the rule that stopped it; none for the campaign's own window. */
  | { kind: 'later'; until: Date; reason: LaterReason | null; detail: string };

/** How far ahead the gate looks for a moment both the campaign's window and the regional rules allow. */
const MAX_STEPS = 32;

export function gate(now: Date, campaign: GateCampaign, callee: Callee): Verdict {
  const revoked = (callee.revocations ?? []).filter((r) => revocationStops(r, campaign.requiredConsent));
  if (revoked.length) return { kind: 'blocked', reason: 'consent_revoked', detail: [...new Set(revoked.map((r) => r.kind))].join(',') };
  const missing = campaign.requiredConsent.filter((kind) => !callee.consents.includes(kind));
  if (missing.length) return { kind: 'blocked', reason: 'consent_missing', detail: missing.join(',') };
  const registry = campaign.purpose && callee.registry ? registryBlock(campaign.purpose, callee.registry, now) : null;
  if (registry) return { kind: 'blocked', reason: 'registry', detail: registry };
  const place = placeOfNumber(callee.phoneNumber);
  const region = campaign.regionalRules ? calleeRegion(callee.region, place) : null;
  // The campaign's hours are read in the contact's zone, else the campaign's; the law's in every zone the
  // number may be in (the contact's own zone, when set, is the one that counts); a contact's own region
  // that the number does not place them in is read in every zone of that region.
  const windowZone = callee.timezone ?? campaign.timezone;
  const zones = callee.timezone ? [callee.timezone] : (lawZones(place, region) ?? [windowZone]);
  const consent = regionalConsent(now, region, zones);
  if (consent && !callee.consents.includes(consent.kind))
    return { kind: 'blocked', reason: 'consent_missing', detail: `${consent.kind} (${consent.region})` };
  const recall = recallBlock(now, region, callee.lastAbandonedAt ?? null);
  if (recall) {
    const until = allowedFrom(recall.until, campaign.window, windowZone, region, zones);
    return { kind: 'later', until, reason: 'abandoned_recall', detail: recall.region };
  }
  const capped = callee.history ? capBlock(now, region, callee.history) : null;
  if (capped) {
    const until = allowedFrom(capped.until, campaign.window, windowZone, region, zones);
    return { kind: 'later', until, reason: 'frequency_cap', detail: capped.region };
  }
  if (!isOpen(now, windowZone, campaign.window)) {
    return { kind: 'later', until: allowedFrom(now, campaign.window, windowZone, region, zones), reason: null, detail: '' };
  }
  const block = regionalBlock(now, region, zones);
  if (!block) return { kind: 'call' };
  return {
    kind: 'later',
    until: allowedFrom(block.until, campaign.window, windowZone, region, zones),
    reason: block.reason,
    detail: block.region,
  };
}

/**
 * The numbers of the callable contacts among `contacts` whose region's frequency caps apply to this
 * campaign's calls: only their histories need reading (the dialer's claim, the dispatch preview).
 */
export function cappedNumbers(
  campaign: Pick<GateCampaign, 'regionalRules'>,
  contacts: readonly { status: string; phoneNumber: string | null; region: string | null }[],
): string[] {
  if (!campaign.regionalRules) return [];
  return contacts.flatMap(({ status, phoneNumber, region }) =>
    status === 'active' && phoneNumber && capsOf(calleeRegion(region, placeOfNumber(phoneNumber))).length > 0 ? [phoneNumber] : [],
  );
}

/**
 * The zones the regional rules are read in: the number's, unless the callee's own region says more (a
 * state where the number names only its country, or another country than the number's): then that
 * region's, every one of them.
 */
function lawZones(place: Place, region: string | null): readonly string[] | null {
  const countryOf = (code: string) => code.split('-')[0];
  if (
    region &&
    region !== place.region &&
    (place.region === null || !place.region.includes('-') || countryOf(region) !== countryOf(place.region))
  ) {
    const own = zonesOfRegion(region);
    if (own.length) return own;
  }
  return place.zones.length ? place.zones : null;
}

/** The first moment at or after `from` that both the campaign's window and the regional rules allow. */
function allowedFrom(from: Date, window: CallingWindow, windowZone: string, region: string | null, zones: readonly string[]): Date {
  let at = from;
  for (let step = 0; step < MAX_STEPS; step += 1) {
    const opening = nextOpening(at, windowZone, window);
    const block = regionalBlock(opening, region, zones);
    if (!block) return opening;
    at = block.until;
  }
  return at;
}
