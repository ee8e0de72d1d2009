import type { CampaignPurpose, DoNotCallRegistry } from '../../generated/prisma/enums.js';

// The national do-not-call registries: a number on one is not called for telephone solicitation unless
// its contact consented to calls or has an established business relationship, and a copy of a registry
// older than the law allows stops solicitation altogether until it is refreshed. Pure: the copies and
// the lookups are read by the dialer's claim and by dispatch (services/registries/).

export interface RegistryRule {
  /** The registry's name in reasons and details. */
  label: string;
  /** How many days after its download a copy may still be relied on. */
  maxAgeDays: number;
  source: string;
}

export const REGISTRY_RULES: Record<DoNotCallRegistry, RegistryRule> = {
  us_dnc: {
    label: 'US National Do Not Call Registry',
    maxAgeDays: 31,
    source: '16 C.F.R. § 310.4(b)(3)(iv); 47 C.F.R. § 64.1200(c)(2)(i)(D)',
  },
  ca_dncl: {
    label: 'Canada National DNCL',
    maxAgeDays: 31,
    source: 'CRTC Unsolicited Telecommunications Rules, Part II, rule 6',
  },
  uk_tps: {
    label: 'UK TPS',
    maxAgeDays: 28,
    source: 'PECR 2003 reg. 21 and ICO direct marketing guidance',
  },
  uk_ctps: {
    label: 'UK CTPS',
    maxAgeDays: 28,
    source: 'PECR 2003 reg. 21 and ICO direct marketing guidance',
  },
};

/**
 * What a campaign is for unless it says: solicitation, the stricter reading (a campaign that sells is
 * held to the registries even when its creator forgot to say so).
 */
export const DEFAULT_PURPOSE: CampaignPurpose = 'solicitation';

/** How long an established business relationship lets a solicitation call a registered number (TSR, 18 months after a purchase). */
export const RELATIONSHIP_MONTHS = 18;

const DAY_MS = 86_400_000;

/** A registry's copy in force: the day its file was downloaded (UTC midnight). */
export interface RegistryCopy {
  registry: DoNotCallRegistry;
  downloadedOn: Date;
}

/** Whole days since the copy was downloaded, counted in UTC. */
export function ageInDays(copy: RegistryCopy, now: Date): number {
  return Math.floor((now.getTime() - copy.downloadedOn.getTime()) / DAY_MS);
}

/** The copies too old to rely on, each with its age in days. */
export function staleCopies(copies: readonly RegistryCopy[], now: Date): { registry: DoNotCallRegistry; ageDays: number }[] {
  return copies
    .map((copy) => ({ registry: copy.registry, ageDays: ageInDays(copy, now) }))
    .filter((copy) => copy.ageDays > REGISTRY_RULES[copy.registry].maxAgeDays);
}

/** What people read about stale copies: each registry, its age and its limit. */
export function staleDetail(stale: readonly { registry: DoNotCallRegistry; ageDays: number }[]): string {
  return stale
    .map(
      ({ registry, ageDays }) =>
        `the copy of the ${REGISTRY_RULES[registry].label} is ${ageDays} days old (at most ${REGISTRY_RULES[registry].maxAgeDays})`,
    )
    .join('; ');
}

/** The callee as the registry rule sees it. */
export interface RegistryCallee {
  /** The registry the number is on; null when on none (or not looked up). */
  registry: DoNotCallRegistry | null;
  /** The contact consented to calls (not revoked). */
  consentsToCalls: boolean;
  /** The newest established business relationship recorded (not revoked), if any. */
  relationshipSince: Date | null;
}

/** The registry that stops this call, or null: only solicitation is held to the registries. */
export function registryBlock(purpose: CampaignPurpose, callee: RegistryCallee, now: Date): DoNotCallRegistry | null {
  if (purpose !== 'solicitation' || !callee.registry || callee.consentsToCalls) return null;
  if (callee.relationshipSince && relationshipHolds(callee.relationshipSince, now)) return null;
  return callee.registry;
}

function relationshipHolds(since: Date, now: Date): boolean {
  const until = new Date(since);
  until.setUTCMonth(until.getUTCMonth() + RELATIONSHIP_MONTHS);
  return now < until;
}
