import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { gate, type Callee, type GateCampaign } from '../src/services/calling-rules/gate.js';

// The independent checker: a rule table of its own, written from the sources the rules JSON cites
// (docs/compliance-rules.md), with its own arithmetic (its own holiday computus and calendars, Luxon for
// the zones), and none of the gate's modules but the gate itself. It dials simulated contacts through
// the real gate over two years with a clock it sets, walking them into holidays, weekends and the
// daylight-saving changes of the US and Europe, and each call the gate lets through is put to every
// judge. A judge answers what is wrong with a call, or nothing. The frequency caps count the callee's
// earlier dials of the walk (and a refusal some French callees made); a share of the callees are on a
// national do-not-call registry, some with a consent or a business relationship, called by
// solicitation and informational campaigns.

// ---- Its own calendars -------------------------------------------------------------------------------

const ymd = (y: number, m: number, d: number) => DateTime.utc(y, m, d);
const iso = (date: DateTime) => date.toISODate()!;

/** Easter Sunday (the anonymous Gregorian computus). */
function easter(year: number): DateTime {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return ymd(year, month, day);
}

/** The nth (1-based; -1 the last) weekday (1 Monday ... 7 Sunday) of a month. */
function nth(year: number, month: number, weekday: number, n: number): DateTime {
  if (n > 0) {
    const first = ymd(year, month, 1);
    return first.plus({ days: ((weekday - first.weekday + 7) % 7) + (n - 1) * 7 });
  }
  const last = ymd(year, month, 1).plus({ months: 1 }).minus({ days: 1 });
  return last.minus({ days: (last.weekday - weekday + 7) % 7 });
}

/** 5 U.S.C. § 6103: the holidays, and the Friday before or Monday after one on a weekend. */
function usFederal(year: number): DateTime[] {
  const fixed = [ymd(year, 1, 1), ymd(year, 6, 19), ymd(year, 7, 4), ymd(year, 11, 11), ymd(year, 12, 25), ymd(year + 1, 1, 1)];
  const observed = fixed.flatMap((day) =>
    day.weekday === 6 ? [day, day.minus({ days: 1 })] : day.weekday === 7 ? [day, day.plus({ days: 1 })] : [day],
  );
  return [
    ...observed,
    nth(year, 1, 1, 3), // Martin Luther King, Jr.
    nth(year, 2, 1, 3), // Washington
    nth(year, 5, 1, -1), // Memorial Day
    nth(year, 9, 1, 1), // Labor Day
    nth(year, 10, 1, 2), // Columbus Day
    nth(year, 11, 4, 4), // Thanksgiving
  ];
}

const CALENDARS: Record<string, (year: number) => DateTime[]> = {
  US: usFederal,
  // Ala. Code § 1-3-8: Confederate Memorial Day (4th Monday of April), Jefferson Davis' birthday (1st Monday
  // of June), Mardi Gras in Baldwin and Mobile counties.
  AL: (y) => [...usFederal(y), nth(y, 4, 1, 4), nth(y, 6, 1, 1), easter(y).minus({ days: 47 })],
  // La. R.S. 1:55: Mardi Gras, Good Friday.
  LA: (y) => [...usFederal(y), easter(y).minus({ days: 47 }), easter(y).minus({ days: 2 })],
  // 44 P.S. § 11: Good Friday, Flag Day, Election Day (the Tuesday after the first Monday of November).
  PA: (y) => [...usFederal(y), easter(y).minus({ days: 2 }), ymd(y, 6, 14), nth(y, 11, 1, 1).plus({ days: 1 })],
  // R.I. Gen. Laws § 25-1-1: Victory Day, the second Monday of August.
  RI: (y) => [...usFederal(y), nth(y, 8, 1, 2)],
  // Utah Code § 63G-1-301: Pioneer Day.
  UT: (y) => [...usFederal(y), ymd(y, 7, 24)],
  // Code du travail L. 3133-1.
  FR: (y) => [
    ...[
      [1, 1],
      [5, 1],
      [5, 8],
      [7, 14],
      [8, 15],
      [11, 1],
      [11, 11],
      [12, 25],
    ].map(([m, d]) => ymd(y, m!, d!)),
    easter(y).plus({ days: 1 }),
    easter(y).plus({ days: 39 }),
    easter(y).plus({ days: 50 }),
  ],
  // Spain's national festivos (the communities' own are not re-derived here: the checker holds a subset).
  ES: (y) => [
    ...[
      [1, 1],
      [1, 6],
      [5, 1],
      [8, 15],
      [10, 12],
      [11, 1],
      [12, 6],
      [12, 8],
      [12, 25],
    ].map(([m, d]) => ymd(y, m!, d!)),
    easter(y).minus({ days: 2 }),
  ],
};

const holidaySets = new Map<string, Set<string>>();
function isHolidayIn(calendar: string, local: DateTime): boolean {
  const key = `${calendar}:${local.year}`;
  let set = holidaySets.get(key);
  if (!set) holidaySets.set(key, (set = new Set(CALENDARS[calendar]!(local.year).map(iso))));
  return set.has(local.toISODate()!);
}

// ---- Its own rule table --------------------------------------------------------------------------------

type Window = [number, number];
interface TableRule {
  region: string;
  /** Windows by ISO weekday (1 Monday ... 7 Sunday); none: barred. */
  windows: (weekday: number) => Window[];
  holidays?: string;
  /** A fixed clock the statute speaks in. */
  clock?: string;
  consent?: { kind: 'calls'; since: string };
  recallHours?: number;
}

const h = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3));
const every = (from: string, to: string) => () => [[h(from), h(to)] as Window];
const weekdaysOnly =
  (...windows: [string, string][]) =>
  (weekday: number) =>
    weekday <= 5 ? windows.map(([a, b]) => [h(a), h(b)] as Window) : [];
const noSunday = (from: string, to: string) => (weekday: number) => (weekday === 7 ? [] : [[h(from), h(to)] as Window]);

const TABLE: TableRule[] = [
  { region: 'US', windows: every('08:00', '21:00') }, // 47 C.F.R. § 64.1200(c)(1)
  { region: 'US-AL', windows: noSunday('08:00', '20:00'), holidays: 'AL' },
  { region: 'US-CT', windows: every('09:00', '20:00') },
  { region: 'US-FL', windows: every('08:00', '20:00') },
  { region: 'US-KY', windows: every('10:00', '21:00') },
  { region: 'US-LA', windows: noSunday('08:00', '20:00'), holidays: 'LA' },
  { region: 'US-MD', windows: every('08:00', '20:00') },
  { region: 'US-MA', windows: every('08:00', '20:00') },
  { region: 'US-MS', windows: noSunday('08:00', '20:00'), clock: 'UTC-6' }, // Central Standard Time
  { region: 'US-OK', windows: every('08:00', '20:00') },
  { region: 'US-PA', windows: every('08:00', '21:00'), holidays: 'PA' },
  {
    region: 'US-RI',
    windows: (d) => (d <= 5 ? [[h('09:00'), h('18:00')]] : d === 6 ? [[h('10:00'), h('17:00')]] : []),
    holidays: 'RI',
  },
  { region: 'US-SD', windows: weekdaysOnly(['09:00', '21:00']) },
  { region: 'US-TX', windows: (d) => [[h(d === 7 ? '12:00' : '09:00'), h('21:00')]] },
  { region: 'US-UT', windows: noSunday('08:00', '21:00'), holidays: 'UT' },
  { region: 'US-WA', windows: every('08:00', '20:00') },
  { region: 'CA', windows: (d) => [d <= 5 ? [h('09:00'), h('21:30')] : [h('10:00'), h('18:00')]] },
  {
    region: 'FR',
    windows: weekdaysOnly(['10:00', '13:00'], ['14:00', '20:00']),
    holidays: 'FR',
    consent: { kind: 'calls', since: '2026-08-11' },
  },
  { region: 'ES', windows: weekdaysOnly(['09:00', '21:00']), holidays: 'ES', consent: { kind: 'calls', since: '2023-06-29' } },
  { region: 'DE', windows: every('00:00', '24:00'), consent: { kind: 'calls', since: '2004-07-08' } },
  { region: 'GB', windows: (d) => [[h(d <= 5 ? '08:00' : '09:00'), h('21:00')]], recallHours: 24 },
];

const tableRulesOf = (region: string) => TABLE.filter((rule) => rule.region === region || rule.region === region.split('-')[0]);

// ---- Its own places --------------------------------------------------------------------------------------

const NY = 'America/New_York';
const CHI = 'America/Chicago';
const DEN = 'America/Denver';
const LA_ = 'America/Los_Angeles';
/** Numbers it dials (the first digits; four more make a valid number), with the region and zones the sources say they are in. */
const PLACES: { number: string; region: string; zones: string[] }[] = [
  { number: '+1212555', region: 'US-NY', zones: [NY] },
  { number: '+1305555', region: 'US-FL', zones: [NY] },
  { number: '+1850555', region: 'US-FL', zones: [CHI, NY] },
  { number: '+1601555', region: 'US-MS', zones: [CHI] },
  { number: '+1504555', region: 'US-LA', zones: [CHI] },
  { number: '+1205555', region: 'US-AL', zones: [CHI] },
  { number: '+1215555', region: 'US-PA', zones: [NY] },
  { number: '+1401555', region: 'US-RI', zones: [NY] },
  { number: '+1801555', region: 'US-UT', zones: [DEN] },
  { number: '+1605555', region: 'US-SD', zones: [CHI, DEN] },
  { number: '+1512555', region: 'US-TX', zones: [CHI] },
  { number: '+1915555', region: 'US-TX', zones: [DEN] },
  { number: '+1860555', region: 'US-CT', zones: [NY] },
  { number: '+1502555', region: 'US-KY', zones: [NY] },
  { number: '+1410555', region: 'US-MD', zones: [NY] },
  { number: '+1207555', region: 'US-ME', zones: [NY] },
  { number: '+1617555', region: 'US-MA', zones: [NY] },
  { number: '+1405555', region: 'US-OK', zones: [CHI] },
  { number: '+1206555', region: 'US-WA', zones: [LA_] },
  { number: '+1415555', region: 'US-CA', zones: [LA_] },
  { number: '+1602555', region: 'US-AZ', zones: ['America/Phoenix'] },
  { number: '+1808555', region: 'US-HI', zones: ['Pacific/Honolulu'] },
  // An area code newer than any table: somewhere in the US.
  { number: '+1357555', region: 'US', zones: [NY, CHI, DEN, LA_, 'America/Phoenix', 'America/Anchorage', 'Pacific/Honolulu'] },
  { number: '+1416555', region: 'CA-ON', zones: ['America/Toronto'] },
  { number: '+1604555', region: 'CA-BC', zones: ['America/Vancouver'] },
  { number: '+1709555', region: 'CA-NL', zones: ['America/St_Johns'] },
  { number: '+3314455', region: 'FR', zones: ['Europe/Paris'] },
  { number: '+3491234', region: 'ES', zones: ['Europe/Madrid', 'Atlantic/Canary'] },
  { number: '+4930123', region: 'DE', zones: ['Europe/Berlin'] },
  { number: '+44207946', region: 'GB', zones: ['Europe/London'] },
];

// ---- The judges -------------------------------------------------------------------------------------------

interface Dial {
  at: Date;
  callee: Callee;
  campaign: GateCampaign;
  /** Where the checker says the callee is, and whose law applies. */
  region: string;
  zones: string[];
  /** The callee's calls before this one, for judges that count. */
  earlier: readonly Date[];
  /** When the callee refused a call (asked not to be called), if they did. */
  refusedAt: Date | null;
}

/**
 * The caps, from their statutes: Fla. Stat. § 501.059(8)(a), Okla. Stat. tit. 15 § 775C.4, Md. Com. Law
 * § 14-4503 (3 calls per 24 hours); Me. Rev. Stat. tit. 10 § 1499-B (1 automated call per 8 hours);
 * France's Code de la consommation art. L. 223-1 and its 2022 decree (4 calls per 30 days, none for 60
 * days after a refusal).
 */
const CAPS = [
  { region: 'US-FL', calls: 3, hours: 24, pauseDays: 0 },
  { region: 'US-OK', calls: 3, hours: 24, pauseDays: 0 },
  { region: 'US-MD', calls: 3, hours: 24, pauseDays: 0 },
  { region: 'US-ME', calls: 1, hours: 8, pauseDays: 0 },
  { region: 'FR', calls: 4, hours: 30 * 24, pauseDays: 60 },
];

const REGISTRIES = ['us_dnc', 'ca_dncl', 'uk_tps'] as const;
type Judge = { name: string; verdict: (dial: Dial) => string | null };

const minuteOf = (local: DateTime) => local.hour * 60 + local.minute;

const JUDGES: Judge[] = [
  {
    name: 'regional hours, days and holidays',
    verdict: ({ at, region, zones }) => {
      for (const rule of tableRulesOf(region)) {
        for (const zone of rule.clock ? [rule.clock] : zones) {
          const local = DateTime.fromJSDate(at, { zone });
          if (rule.holidays && isHolidayIn(rule.holidays, local)) return `${rule.region}: holiday ${local.toISODate()} in ${zone}`;
          const windows = rule.windows(local.weekday);
          if (!windows.some(([from, to]) => minuteOf(local) >= from && minuteOf(local) < to))
            return `${rule.region}: ${local.toFormat('ccc yyyy-MM-dd HH:mm')} in ${zone}`;
        }
      }
      return null;
    },
  },
  {
    name: 'consent',
    verdict: ({ at, callee, campaign, region, zones }) => {
      const missing = campaign.requiredConsent.find((kind) => !callee.consents.includes(kind));
      if (missing) return `the campaign's ${missing}`;
      for (const rule of tableRulesOf(region)) {
        if (!rule.consent || callee.consents.includes(rule.consent.kind)) continue;
        if (zones.some((zone) => DateTime.fromJSDate(at, { zone }).toISODate()! >= rule.consent!.since))
          return `${rule.region}'s ${rule.consent.kind}`;
      }
      return null;
    },
  },
  {
    name: 're-call after an abandoned call',
    verdict: ({ at, callee, region }) => {
      const rule = tableRulesOf(region).find((r) => r.recallHours);
      const last = callee.lastAbandonedAt;
      return rule && last && at.getTime() < last.getTime() + rule.recallHours! * 3_600_000
        ? `${rule.region}: abandoned at ${last.toISOString()}`
        : null;
    },
  },
  {
    name: 'frequency caps',
    verdict: ({ at, region, earlier, refusedAt }) => {
      for (const cap of CAPS.filter((c) => c.region === region || c.region === region.split('-')[0])) {
        const count = earlier.filter((d) => d.getTime() > at.getTime() - cap.hours * 3_600_000).length;
        if (count >= cap.calls) return `${cap.region}: ${count} calls in the last ${cap.hours} h`;
        if (cap.pauseDays && refusedAt && at.getTime() < refusedAt.getTime() + cap.pauseDays * 86_400_000)
          return `${cap.region}: refused on ${refusedAt.toISOString()}`;
      }
      return null;
    },
  },
  {
    name: 'national do-not-call registries',
    verdict: ({ at, callee, campaign }) => {
      const listed = callee.registry;
      if (campaign.purpose !== 'solicitation' || !listed?.registry || listed.consentsToCalls) return null;
      // The TSR's established business relationship: 18 months after the purchase.
      const since = listed.relationshipSince;
      if (since && DateTime.fromJSDate(since, { zone: 'utc' }).plus({ months: 18 }).toMillis() > at.getTime()) return null;
      return `on ${listed.registry} without a consent or a recent relationship`;
    },
  },
  {
    name: "the campaign's own window",
    verdict: ({ at, callee, campaign }) => {
      const local = DateTime.fromJSDate(at, { zone: callee.timezone ?? campaign.timezone });
      const day = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'][local.weekday - 1]!;
      const open =
        campaign.window.days.includes(day as never) &&
        minuteOf(local) >= h(campaign.window.start) &&
        minuteOf(local) < h(campaign.window.end);
      return open ? null : `${local.toFormat('ccc HH:mm')} outside ${campaign.window.start}-${campaign.window.end}`;
    },
  },
];

// ---- The simulation ----------------------------------------------------------------------------------------

/** mulberry32: a seeded generator, so that a failure can be dialed again. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const DST_CHANGES = [
  '2026-03-08T07:00Z',
  '2026-03-29T01:00Z',
  '2026-10-25T01:00Z',
  '2026-11-01T06:00Z',
  '2027-03-14T07:00Z',
  '2027-03-28T01:00Z',
  '2027-10-31T01:00Z',
  '2027-11-07T06:00Z',
].map((s) => Date.parse(s));
const FROM = Date.parse('2026-01-01T00:00:00Z');
const SPAN = Date.parse('2027-12-31T00:00:00Z') - FROM;

const ALL_WEEK = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;

describe('the independent checker', () => {
  it('finds no call the gate let through that its own table forbids, over 10,000 simulated dials', { timeout: 600_000 }, () => {
    const next = random(34);
    const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
    const violations: string[] = [];
    const judged = new Map<string, number>();
    let dials = 0;
    let held = 0;
    const heldBy = new Map<string, number>();
    const blockedBy = new Map<string, number>();

    for (let person = 0; dials < 10_000; person += 1) {
      const place = pick(PLACES);
      const number = `${place.number}${1000 + (person % 9000)}`;
      // Some people recorded their own region, or their own zone, which then count.
      const own = next() < 0.08 ? pick(['US-FL', 'US-TX', 'US-UT', 'US-PA', 'FR', 'GB']) : null;
      const ownZone = next() < 0.05 ? pick([NY, CHI, 'Europe/Paris']) : null;
      const region = own ?? place.region;
      // The law is read in the contact's own zone; else where their own region puts them, when the number
      // says less (only a country) or another country; else in every zone of the number.
      const country = (code: string) => code.split('-')[0];
      const elsewhere = own !== null && (!place.region.includes('-') || country(own) !== country(place.region));
      const zones = ownZone ? [ownZone] : elsewhere ? ownZonesOf(own) : place.zones;
      const consents = next() < 0.7 ? (['calls'] as const) : ([] as const);
      const campaign: GateCampaign =
        next() < 0.6
          ? { timezone: 'UTC', window: { start: '00:00', end: '24:00', days: [...ALL_WEEK] }, requiredConsent: [], regionalRules: true }
          : {
              timezone: pick([NY, CHI, 'Europe/Paris', 'UTC']),
              window: {
                start: pick(['08:00', '09:00', '10:30']),
                end: pick(['17:00', '20:30', '24:00']),
                days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'],
              },
              requiredConsent: next() < 0.2 ? ['calls'] : [],
              regionalRules: true,
            };
      // Where the person's dials start: anywhere in two years, on one of their holidays, or an hour from a clock change.
      const roll = next();
      let at: number;
      if (roll < 0.3) at = pick(DST_CHANGES) + (next() - 0.5) * 6 * 3_600_000;
      else if (roll < 0.6) {
        const calendar = tableRulesOf(region).find((r) => r.holidays)?.holidays ?? 'US';
        const day = pick(CALENDARS[calendar]!(pick([2026, 2027])));
        at = day.toMillis() + next() * 86_400_000 - 12 * 3_600_000;
      } else at = FROM + next() * SPAN;
      const abandonedAt = region === 'GB' && next() < 0.5 ? new Date(at - next() * 30 * 3_600_000) : null;
      const refusedAt = region === 'FR' && next() < 0.3 ? new Date(at - next() * 90 * 86_400_000) : null;
      const registry =
        next() < 0.15
          ? {
              registry: pick(REGISTRIES),
              consentsToCalls: next() < 0.3,
              relationshipSince: next() < 0.4 ? new Date(at - next() * 730 * 86_400_000) : null,
            }
          : undefined;
      campaign.purpose = next() < 0.7 ? 'solicitation' : 'informational';
      const callee: Callee = { phoneNumber: number, timezone: ownZone, region: own, consents, lastAbandonedAt: abandonedAt, registry };
      const earlier: Date[] = [];

      for (let step = 0; step < 8; step += 1) {
        const when = new Date(at);
        const verdict = gate(when, campaign, { ...callee, history: { placed: [...earlier], refusedAt } });
        if (verdict.kind === 'blocked') {
          blockedBy.set(verdict.reason, (blockedBy.get(verdict.reason) ?? 0) + 1);
          break;
        }
        if (verdict.kind === 'later') {
          held += 1;
          heldBy.set(verdict.reason ?? 'campaign window', (heldBy.get(verdict.reason ?? 'campaign window') ?? 0) + 1);
          if (verdict.until.getTime() <= at) violations.push(`${number}: held at ${when.toISOString()} until a moment not after it`);
          at = verdict.until.getTime();
          continue;
        }
        dials += 1;
        const dial: Dial = { at: when, callee, campaign, region, zones, earlier, refusedAt };
        for (const judge of JUDGES) {
          const wrong = judge.verdict(dial);
          judged.set(judge.name, (judged.get(judge.name) ?? 0) + 1);
          if (wrong) violations.push(`${judge.name}: ${number} (${region}) at ${when.toISOString()}: ${wrong}`);
        }
        earlier.push(when);
        // The next attempt: minutes to days later, often across a closing hour or a holiday.
        at += pick([5, 47, 180, 600, 1_440, 3_000]) * 60_000 * (0.5 + next());
      }
    }

    expect(violations.slice(0, 20)).toEqual([]);
    expect(dials).toBeGreaterThanOrEqual(10_000);
    for (const judge of JUDGES) expect(judged.get(judge.name), judge.name).toBe(dials);
    // The walk went through what it is meant to: every kind of hold, many times.
    for (const reason of ['regional_hours', 'regional_day', 'holiday', 'abandoned_recall', 'frequency_cap', 'campaign window'])
      expect(heldBy.get(reason) ?? 0, `${reason} in ${JSON.stringify(Object.fromEntries(heldBy))}`).toBeGreaterThan(20);
    expect(blockedBy.get('registry') ?? 0, JSON.stringify(Object.fromEntries(blockedBy))).toBeGreaterThan(20);
    expect(held).toBeGreaterThan(dials / 4);
  });
});

/** The zones of a state the checker knows, for a person whose number names no state. */
function ownZonesOf(region: string): string[] {
  return { 'US-FL': [CHI, NY], 'US-TX': [CHI, DEN], 'US-UT': [DEN], 'US-PA': [NY], FR: ['Europe/Paris'], GB: ['Europe/London'] }[region]!;
}
