import type { ConsentKind } from '../../generated/prisma/client.js';
import rulesFile from './data/calling-rules.json' with { type: 'json' };

// What a revoked consent stops (`consentRevocation` in data/calling-rules.json; FCC 24-24). A person may
// revoke by any reasonable means; every source records it on the contact's consents or puts the number
// on the do-not-call list, and the gate reads both inside the dialer's claim, so it holds from the next
// call on. Every call we place is a call and an AI-voiced one, so revoking `calls` or `ai_calls` stops
// every campaign; revoking another kind stops the campaigns that require it, until the revoke-all rule
// is in force: a revocation made from that date stops every call to the person.

interface RevocationData {
  version: string;
  revokeAllFrom: string;
}

const data = (rulesFile as { consentRevocation: RevocationData }).consentRevocation;

export const REVOCATION_VERSION = data.version;

/** From this instant (midnight UTC, before midnight anywhere in the US) a revocation covers every call. */
export const REVOKE_ALL_FROM = new Date(`${data.revokeAllFrom}T00:00:00Z`);
if (Number.isNaN(REVOKE_ALL_FROM.getTime())) throw new Error('calling-rules.json: consentRevocation.revokeAllFrom is not a date');

/** A consent the contact revoked and has not given again since. */
export interface Revocation {
  kind: ConsentKind;
  at: Date;
}

const EVERY_CALL: readonly ConsentKind[] = ['calls', 'ai_calls'];

/** Whether the revocation stops the calls of a campaign that requires these consents. */
export function revocationStops(revocation: Revocation, requiredConsent: readonly ConsentKind[]): boolean {
  return revocation.at >= REVOKE_ALL_FROM || EVERY_CALL.includes(revocation.kind) || requiredConsent.includes(revocation.kind);
}
