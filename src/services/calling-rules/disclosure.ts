import rulesFile from './data/calling-rules.json' with { type: 'json' };

// Whether an AI agent must say it is an AI before anything else, by the callee's region: the laws that
// require it are data in data/calling-rules.json (`aiDisclosure`), each with the day it applies from.

interface DisclosureRule {
  regions: readonly string[];
  /** The first day (ISO date, UTC) the rule applies. */
  since: string;
  name: string;
  source: string;
}

const data = rulesFile.aiDisclosure as { sentence: string; acceptedPhrases: readonly string[]; rules: readonly DisclosureRule[] };

/** What the agent says first where a rule requires it. */
export const AI_DISCLOSURE_SENTENCE = data.sentence;

export interface DisclosureVerdict {
  required: boolean;
  /** The rule that requires it; none when required only because the region is not known. */
  rule?: { name: string; source: string };
}

/**
 * Whether a call at `at` to someone in `region` (ISO 3166-2 like 'US-CA', or a country like 'DE') must
 * open with the disclosure. A rule of a country covers its subdivisions. An unknown region discloses:
 * the callee may be where the law requires it, and saying it costs one sentence.
 */
export function aiDisclosure(region: string | null, at: Date): DisclosureVerdict {
  if (!region) return { required: true };
  const code = region.toUpperCase();
  const country = code.split('-')[0]!;
  const day = at.toISOString().slice(0, 10);
  const rule = data.rules.find((r) => r.since <= day && (r.regions.includes(code) || r.regions.includes(country)));
  return rule ? { required: true, rule: { name: rule.name, source: rule.source } } : { required: false };
}

/** Case, runs of spaces and typographic apostrophes do not matter to whether a line says something. */
const normalized = (text: string) =>
  text
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/\s+/g, ' ')
    .trim();
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The disclosure sentence, or one of the accepted phrases, as whole words. */
const DISCLOSES = new RegExp(
  `(^|[^a-z0-9'])(${[data.sentence, ...data.acceptedPhrases].map((phrase) => escaped(normalized(phrase))).join('|')})($|[^a-z0-9'])`,
);

/**
 * Whether an agent's opening line (a provider-hosted agent's begin message) discloses that an AI is
 * calling: it holds the data's sentence or one of its accepted phrases (`aiDisclosure.acceptedPhrases`),
 * whatever the case and spacing. The built-in agent needs no check: it says the sentence itself.
 */
export const carriesDisclosure = (openingLine: string | null): boolean => openingLine !== null && DISCLOSES.test(normalized(openingLine));
