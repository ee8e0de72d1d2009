import { aiDisclosure, AI_DISCLOSURE_SENTENCE, carriesDisclosure, type DisclosureVerdict } from '../../calling-rules/disclosure.js';
import { placeOfNumber } from '../../calling-rules/places.js';

// What an agent says first on a call: the AI disclosure where the callee's region requires it, then the
// profile's greeting. One rule for every agent that runs outside Retell's own LLM: our brain, and the
// voice runtime of Twilio calls, which reads it from us.

/** The callee's region: the contact's own, else the place of the number called. */
export function calleeRegion(contactRegion: string | null, toNumber: string | null): string | null {
  return contactRegion ?? (toNumber ? placeOfNumber(toNumber).region : null);
}

export interface BeginMessage {
  text: string;
  region: string | null;
  disclosure: DisclosureVerdict;
}

/** The begin message of a call at `at` to someone in `region`, from the profile's `begin_message`. */
export function beginMessage(profile: Record<string, unknown>, region: string | null, at: Date): BeginMessage {
  const greeting = typeof profile.begin_message === 'string' ? profile.begin_message.trim() : '';
  const disclosure = aiDisclosure(region, at);
  // A greeting that already discloses (the templates' begin message does) is not told twice.
  if (!disclosure.required || carriesDisclosure(greeting)) return { text: greeting, region, disclosure };
  return { text: greeting ? `${AI_DISCLOSURE_SENTENCE} ${greeting}` : AI_DISCLOSURE_SENTENCE, region, disclosure };
}
