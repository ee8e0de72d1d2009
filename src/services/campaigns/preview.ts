import { estimateCallsCost, expectedCallsCents, type CostEstimate } from '../billing/calls.js';
import { CAP_LOOKBACK_MS, type CallHistory } from '../calling-rules/caps.js';
import { cappedNumbers, type BlockReason, type GateCampaign } from '../calling-rules/gate.js';
import { RECALL_HOURS, REGIONAL_CONSENT_KINDS } from '../calling-rules/regional-hours.js';
import { placeOfNumber } from '../calling-rules/places.js';
import type { ServiceContext } from '../context.js';
import { gateRules, judge, type Judgement } from '../dialer/decisions.js';
import { getCampaign } from './campaigns.js';
import { callHistories, exemptionAt, previewContacts, type PreviewContact } from './store.js';

// A dry run of a dispatch: every contact the dialer would be left with, judged at the moment it is due
// by the dialer's own judgement (dialer/decisions.ts `judge`: its status checks, then the compliance
// gate, from the campaign's row as the dialer's tick maps it), with the service's clock. Nothing is
// written. Contacts are read in batches in id order; the gate's verdict is cached per place, since for
// one moment it depends only on the callee's zone, region, the place of their number and the consents
// they hold (see cacheKey).

/** The rule that holds a contact back: a rule the dialer records, `invalid` (no number to call), or the campaign's own calling hours. */
export const PREVIEW_RULES = [
  'do_not_call',
  'consent_missing',
  'consent_revoked',
  'registry',
  'invalid',
  'regional_hours',
  'regional_day',
  'holiday',
  'frequency_cap',
  'abandoned_recall',
  'calling_hours',
] as const satisfies readonly (BlockReason | 'invalid' | 'calling_hours')[];
export type PreviewRule = (typeof PREVIEW_RULES)[number];

export interface PreviewedContact {
  contactId: string;
  phoneNumber: string | null;
  /** When the dialer would call it first; null: never (blocked for good). */
  callAt: Date | null;
  /** What holds it back until `blockedUntil` (null: for good), if anything does. */
  blockedBy: PreviewRule | null;
  blockedUntil: Date | null;
  /** The rule's detail: the region whose law applies, or the consents missing. */
  detail: string | null;
}

export interface DispatchPreview {
  campaignId: string;
  /** The moment the preview judged from: now, or the campaign's start when that is ahead. */
  from: Date;
  contacts: number;
  /** Contacts that would be called, now or later. */
  toCall: number;
  /** Of those, the ones callable right at `from`. */
  callableNow: number;
  /** Contacts each rule holds back, for good or until later (every rule, 0 when none). */
  byRule: { rule: PreviewRule; contacts: number }[];
  firstCallAt: Date | null;
  /** What the calls are expected to cost (billing's `expectedCallsCents`), and what the account may spend now. */
  creditsNeededCents: bigint;
  creditsAvailableCents: bigint;
  /** What calling `toCall` contacts is expected to cost, by the customer's own call lengths. */
  costEstimate: CostEstimate;
  /** Every contact, the first to be called first (by callAt, then id), those never called last. */
  rows: PreviewedContact[];
}

/** Contacts read per statement. */
const BATCH = 5_000;
const FIRST_ID = '00000000-0000-0000-0000-000000000000';

/** Previews dispatching one of the caller's campaigns (another customer's is a 404). */
export async function previewDispatch(ctx: ServiceContext, campaignId: string): Promise<DispatchPreview> {
  const campaign = await getCampaign(ctx, campaignId);
  const now = ctx.clock.now();
  const from = campaign.startedAt && campaign.startedAt > now && campaign.status !== 'paused' ? campaign.startedAt : now;
  const rules = gateRules({ ...campaign, exemptionId: (await exemptionAt(ctx.sql, campaign.userId, now)) ?? null });
  // What the dialer's tick reads of each contact beside its row (dialer/placing.ts).
  const reads = {
    consentKinds: [...new Set([...campaign.requiredConsent, ...REGIONAL_CONSENT_KINDS])],
    lookUpRegistries: campaign.purpose === 'solicitation',
    now: from,
    recallHours: RECALL_HOURS,
  };
  const cache = new Map<string, Outcome>();
  const rows: PreviewedContact[] = [];
  const counts = new Map<PreviewRule, number>();
  let toCall = 0;
  let callableNow = 0;
  let after = FIRST_ID;
  for (;;) {
    const batch = await previewContacts(ctx.sql, campaignId, reads, after, BATCH);
    const histories = await cappedHistories(ctx, campaign, rules, batch, from);
    for (const contact of batch) {
      const at = contact.dueAt && contact.dueAt > from ? contact.dueAt : from;
      const history = contact.phoneNumber ? histories.get(contact.phoneNumber) : undefined;
      const key = history ? null : cacheKey(at, contact);
      let outcome = key === null ? undefined : cache.get(key);
      if (!outcome) {
        outcome = outcomeOf(at, judge(at, rules, { ...contact, ...(history && { history }) }));
        if (key !== null) cache.set(key, outcome);
      }
      const { callAt, blockedBy, blockedUntil, detail } = outcome;
      rows.push({ contactId: contact.contactId, phoneNumber: contact.phoneNumber, callAt, blockedBy, blockedUntil, detail });
      if (blockedBy) counts.set(blockedBy, (counts.get(blockedBy) ?? 0) + 1);
      if (callAt) toCall += 1;
      if (callAt?.getTime() === from.getTime()) callableNow += 1;
    }
    if (batch.length < BATCH) break;
    after = batch.at(-1)!.contactId;
  }
  rows.sort(firstCalledFirst);
  const costEstimate = await estimateCallsCost(ctx.sql, ctx.settings, campaign.userId, toCall);
  return {
    campaignId,
    from,
    contacts: rows.length,
    toCall,
    callableNow,
    byRule: PREVIEW_RULES.map((rule) => ({ rule, contacts: counts.get(rule) ?? 0 })),
    firstCallAt: rows[0]?.callAt ?? null,
    creditsNeededCents: expectedCallsCents(ctx.settings, toCall),
    creditsAvailableCents: costEstimate.availableCents,
    costEstimate,
    rows,
  };
}

type Outcome = Omit<PreviewedContact, 'contactId' | 'phoneNumber'>;

/** The recent calls to the batch's numbers whose frequency caps apply, as the dialer's tick reads them (without its locks). */
async function cappedHistories(
  ctx: ServiceContext,
  { userId, callSubject: subject }: { userId: string; callSubject: string | null },
  rules: GateCampaign,
  batch: PreviewContact[],
  from: Date,
) {
  const numbers = cappedNumbers(rules, batch);
  if (numbers.length === 0) return new Map<string, CallHistory>();
  return callHistories(ctx.sql, userId, numbers, new Date(from.getTime() - CAP_LOOKBACK_MS), subject);
}

/** What a judgement at `at` says of the contact: called at `at`, later, or never. */
function outcomeOf(at: Date, judged: Judgement): Outcome {
  switch (judged.kind) {
    case 'call':
      return { callAt: at, blockedBy: null, blockedUntil: null, detail: null };
    case 'later':
      return {
        callAt: judged.until,
        blockedBy: judged.block?.reason ?? 'calling_hours',
        blockedUntil: judged.until,
        detail: judged.block?.detail || null,
      };
    case 'uncallable':
      // The rule the dialer records (a registry, a revoked consent) names it better than the outcome it gives the contact.
      return { callAt: null, blockedBy: judged.block?.reason ?? judged.outcome, blockedUntil: null, detail: judged.block?.detail || null };
  }
}

/**
 * What the gate's verdict on an active contact depends on besides the campaign: the moment, the contact's
 * own zone and region, its number's place (region and zones) and the consents it holds. Null for a
 * contact the checks before the gate stop (judged without the cache).
 */
function cacheKey(at: Date, contact: PreviewContact): string | null {
  if (contact.status !== 'active' || !contact.phoneNumber) return null;
  // What the gate reads of the person, beside the place, is rare: such a contact is judged on its own.
  if (contact.revocations.length || contact.lastAbandonedAt || contact.registry.registry) return null;
  const place = placeOfNumber(contact.phoneNumber);
  return `${at.getTime()}|${contact.timezone}|${contact.region}|${place.region}|${place.zones.join(',')}|${contact.consents.join(',')}`;
}

function firstCalledFirst(a: PreviewedContact, b: PreviewedContact): number {
  if (a.callAt === null || b.callAt === null) return a.callAt === b.callAt ? byId(a, b) : a.callAt === null ? 1 : -1;
  return a.callAt.getTime() - b.callAt.getTime() || byId(a, b);
}

const byId = (a: PreviewedContact, b: PreviewedContact) => (a.contactId < b.contactId ? -1 : a.contactId > b.contactId ? 1 : 0);
