import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { DateTime, IANAZone } from 'luxon';
import { describe, expect, it } from 'vitest';
import { WEEKDAYS } from '../src/services/calling-rules/schedule.js';
import areaCodes from '../src/services/calling-rules/data/nanp-area-codes.json' with { type: 'json' };
import rulesFile from '../src/services/calling-rules/data/calling-rules.json' with { type: 'json' };
import { placeOfNumber, zonesOfRegion } from '../src/services/calling-rules/places.js';
import { RECALL_HOURS, recallBlock, regionalBlock, regionalConsent, RULES_VERSION } from '../src/services/calling-rules/regional-hours.js';

// The regional calling-hour rules, pure: where a number is, and when its region's law allows a call, in
// the callee's wall-clock time, with the rule's data checked against its documentation.

const NEW_YORK = 'America/New_York';
const CHICAGO = 'America/Chicago';
const DENVER = 'America/Denver';
const PHOENIX = 'America/Phoenix';
const TORONTO = 'America/Toronto';

/** A wall-clock time in a zone, as a moment. */
const local = (wallClock: string, zone: string) => DateTime.fromISO(wallClock, { zone }).toJSDate();
/** When a block ends, on the wall clock of a zone. */
const untilIn = (block: ReturnType<typeof regionalBlock>, zone: string) =>
  block && DateTime.fromJSDate(block.until, { zone }).toFormat("yyyy-MM-dd'T'HH:mm");

describe('placeOfNumber', () => {
  it('names the state or province of a NANP area code and every zone it spans', () => {
    expect(placeOfNumber('+12125550143')).toEqual({ region: 'US-NY', zones: [NEW_YORK] });
    expect(placeOfNumber('+13055550143')).toEqual({ region: 'US-FL', zones: [NEW_YORK] });
    expect(placeOfNumber('+18505550143')).toEqual({ region: 'US-FL', zones: [CHICAGO, NEW_YORK] });
    expect(placeOfNumber('+16025550143')).toEqual({ region: 'US-AZ', zones: [PHOENIX] });
    expect(placeOfNumber('+14165550143')).toEqual({ region: 'CA-ON', zones: [TORONTO] });
    expect(placeOfNumber('+17875550143')).toEqual({ region: 'US-PR', zones: ['America/Puerto_Rico'] });
    expect(placeOfNumber('+19155550143')).toEqual({ region: 'US-TX', zones: [DENVER] });
    expect(placeOfNumber('+18125550143').zones).toEqual([CHICAGO, NEW_YORK]);
  });

  it('gives no place to toll-free and non-geographic codes, and the country and its zones outside NANP', () => {
    for (const number of ['+18005550199', '+18885550199', '+15005550199', '+19005550199', '+16005550199', '+17005550199'])
      expect(placeOfNumber(number)).toEqual({ region: null, zones: [] });
    expect(placeOfNumber('+442079460958')).toEqual({ region: 'GB', zones: ['Europe/London'] });
    expect(placeOfNumber('+4930123456')).toEqual({ region: 'DE', zones: ['Europe/Berlin'] });
    expect(placeOfNumber('+33144556677')).toEqual({ region: 'FR', zones: ['Europe/Paris'] });
    expect(placeOfNumber('+34912345678')).toEqual({ region: 'ES', zones: ['Europe/Madrid', 'Africa/Ceuta', 'Atlantic/Canary'] });
    expect(placeOfNumber('not a number')).toEqual({ region: null, zones: [] });
  });

  it('hands out a copy, so a caller cannot change the table', () => {
    placeOfNumber('+12125550143').zones.push('Europe/London');
    expect(placeOfNumber('+12125550143').zones).toEqual([NEW_YORK]);
  });

  it('holds every geographic US and Canadian area code, each with a region and known zones', () => {
    const entries = Object.entries(areaCodes.codes);
    expect(entries.filter(([, place]) => /^(US|CA)(-|$)/.test(place.region)).length).toBeGreaterThan(400);
    for (const [code, place] of entries) {
      expect(code).toMatch(/^[2-9]\d\d$/);
      expect(place.region).toMatch(/^[A-Z]{2}(-[A-Z]{2})?$/);
      expect(place.zones.length).toBeGreaterThan(0);
      for (const zone of place.zones) expect(IANAZone.isValidZone(zone), `${code}: ${zone}`).toBe(true);
    }
    for (const code of ['500', '600', '700', '800', '833', '844', '855', '866', '877', '888', '900'])
      expect(areaCodes.codes).not.toHaveProperty(code);
  });
});

describe('regionalBlock', () => {
  it('applies the federal hours at their edges, in the callee’s own zone', () => {
    // Wednesday 10 June 2026.
    expect(regionalBlock(local('2026-06-10T07:59', NEW_YORK), 'US-NY', [NEW_YORK])).toEqual({
      reason: 'regional_hours',
      region: 'US',
      until: local('2026-06-10T08:00', NEW_YORK),
    });
    expect(regionalBlock(local('2026-06-10T08:00', NEW_YORK), 'US-NY', [NEW_YORK])).toBeNull();
    expect(regionalBlock(local('2026-06-10T20:59:59', NEW_YORK), 'US-NY', [NEW_YORK])).toBeNull();
    expect(regionalBlock(local('2026-06-10T21:00', NEW_YORK), 'US-NY', [NEW_YORK])).toEqual({
      reason: 'regional_hours',
      region: 'US',
      until: local('2026-06-11T08:00', NEW_YORK),
    });
    // 10:00 in New York is 07:00 in Los Angeles.
    const at = local('2026-06-10T10:00', NEW_YORK);
    expect(regionalBlock(at, 'US', [NEW_YORK])).toBeNull();
    expect(untilIn(regionalBlock(at, 'US-CA', ['America/Los_Angeles']), 'America/Los_Angeles')).toBe('2026-06-10T08:00');
  });

  it('adds a stricter state’s hours to the federal ones', () => {
    expect(regionalBlock(local('2026-06-10T19:59', NEW_YORK), 'US-FL', [NEW_YORK])).toBeNull();
    const florida = regionalBlock(local('2026-06-10T20:00', NEW_YORK), 'US-FL', [NEW_YORK]);
    expect(florida?.reason).toBe('regional_hours');
    expect(untilIn(florida, NEW_YORK)).toBe('2026-06-11T08:00');
    expect(untilIn(regionalBlock(local('2026-06-10T09:30', NEW_YORK), 'US-KY', [NEW_YORK]), NEW_YORK)).toBe('2026-06-10T10:00');
    expect(regionalBlock(local('2026-06-10T20:30', NEW_YORK), 'us-ny', [NEW_YORK])).toBeNull();
  });

  it('names the region whose rule applied: the state’s when its rule holds the call, the country’s when only that one does', () => {
    const regionOf = (wallClock: string, zone: string, region: string) => regionalBlock(local(wallClock, zone), region, [zone])?.region;
    expect(regionOf('2026-06-10T21:30', NEW_YORK, 'US-NY')).toBe('US'); // New York has no rule of its own
    expect(regionOf('2026-06-10T07:30', NEW_YORK, 'US-PR')).toBe('US');
    expect(regionOf('2026-06-10T20:30', NEW_YORK, 'US-FL')).toBe('US-FL'); // Florida's 20:00, not the federal 21:00
    expect(regionOf('2026-06-10T21:30', NEW_YORK, 'US-FL')).toBe('US-FL'); // both: the stricter state's, which includes the federal
    expect(regionOf('2026-06-14T11:00', CHICAGO, 'US-TX')).toBe('US-TX');
    expect(regionOf('2026-06-14T10:00', DENVER, 'US-UT')).toBe('US-UT');
    expect(regionOf('2026-11-26T10:00', CHICAGO, 'US-AL')).toBe('US-AL');
    expect(regionOf('2026-06-10T07:30', TORONTO, 'CA-ON')).toBe('CA');
    expect(regionOf('2026-06-10T07:30', NEW_YORK, 'us-ny')).toBe('US');
  });

  it('starts Texas Sundays at noon', () => {
    // Sunday 14 June 2026; Saturday the 13th keeps the weekday hours.
    const sunday = regionalBlock(local('2026-06-14T11:59', CHICAGO), 'US-TX', [CHICAGO]);
    expect(sunday?.reason).toBe('regional_hours');
    expect(untilIn(sunday, CHICAGO)).toBe('2026-06-14T12:00');
    expect(regionalBlock(local('2026-06-14T12:00', CHICAGO), 'US-TX', [CHICAGO])).toBeNull();
    expect(regionalBlock(local('2026-06-13T09:00', CHICAGO), 'US-TX', [CHICAGO])).toBeNull();
    expect(untilIn(regionalBlock(local('2026-06-13T08:30', CHICAGO), 'US-TX', [CHICAGO]), CHICAGO)).toBe('2026-06-13T09:00');
  });

  it('bars whole weekdays where a state does', () => {
    const utah = regionalBlock(local('2026-06-14T10:00', DENVER), 'US-UT', [DENVER]);
    expect(utah?.reason).toBe('regional_day');
    expect(untilIn(utah, DENVER)).toBe('2026-06-15T08:00');
    // South Dakota allows automated calls on weekdays only, 09:00 to 21:00.
    const southDakota = placeOfNumber('+16055550143');
    const saturday = regionalBlock(local('2026-06-13T12:00', CHICAGO), southDakota.region, southDakota.zones);
    expect(saturday?.reason).toBe('regional_day');
    expect(untilIn(saturday, DENVER)).toBe('2026-06-15T09:00');
    // Rhode Island: Saturdays 10:00 to 17:00, no Sundays.
    expect(untilIn(regionalBlock(local('2026-06-13T17:00', NEW_YORK), 'US-RI', [NEW_YORK]), NEW_YORK)).toBe('2026-06-15T09:00');
  });

  it('bars the federal holidays where a state bars legal holidays, on the day and on the day observed', () => {
    const thanksgiving = regionalBlock(local('2026-11-26T10:00', CHICAGO), 'US-AL', [CHICAGO]);
    expect(thanksgiving?.reason).toBe('holiday');
    expect(untilIn(thanksgiving, CHICAGO)).toBe('2026-11-27T08:00');
    expect(regionalBlock(local('2026-11-26T10:00', NEW_YORK), 'US-NY', [NEW_YORK])).toBeNull();
    // Independence Day 2026 is a Saturday, observed on Friday 3 July; Alabama bars Sundays too.
    const independence = regionalBlock(local('2026-07-03T10:00', CHICAGO), 'US-AL', [CHICAGO]);
    expect(independence?.reason).toBe('holiday');
    expect(untilIn(independence, CHICAGO)).toBe('2026-07-06T08:00');
    expect(regionalBlock(local('2026-07-04T10:00', CHICAGO), 'US-AL', [CHICAGO])?.reason).toBe('holiday');
    const christmas = regionalBlock(local('2026-12-25T12:00', DENVER), 'US-UT', [DENVER]);
    expect(christmas?.reason).toBe('holiday');
    expect(untilIn(christmas, DENVER)).toBe('2026-12-26T08:00');
    expect(regionalBlock(local('2027-01-18T12:00', NEW_YORK), 'US-PA', [NEW_YORK])?.reason).toBe('holiday'); // MLK Day
    expect(regionalBlock(local('2026-05-25T12:00', NEW_YORK), 'US-PA', [NEW_YORK])?.reason).toBe('holiday'); // Memorial Day
    // New Year's Day 2028 is a Saturday, observed on Friday 31 December 2027.
    expect(regionalBlock(local('2027-12-31T12:00', DENVER), 'US-UT', [DENVER])?.reason).toBe('holiday');
    expect(regionalBlock(local('2027-12-30T12:00', DENVER), 'US-UT', [DENVER])).toBeNull();
  });

  it('follows the wall clock across the US daylight-saving changes', () => {
    for (const day of ['2026-03-08', '2026-11-01']) {
      expect(regionalBlock(local(`${day}T08:30`, NEW_YORK), 'US-NY', [NEW_YORK])).toBeNull();
      for (const from of ['01:30', '07:30']) {
        const block = regionalBlock(local(`${day}T${from}`, NEW_YORK), 'US-NY', [NEW_YORK]);
        expect(block?.reason).toBe('regional_hours');
        expect(untilIn(block, NEW_YORK)).toBe(`${day}T08:00`);
      }
    }
    // 08:00 EDT on the spring-forward day, 08:00 EST on the fall-back day, from the evening before.
    expect(regionalBlock(local('2026-03-07T22:00', NEW_YORK), 'US-NY', [NEW_YORK])?.until.toISOString()).toBe('2026-03-08T12:00:00.000Z');
    expect(regionalBlock(local('2026-10-31T22:00', NEW_YORK), 'US-NY', [NEW_YORK])?.until.toISOString()).toBe('2026-11-01T13:00:00.000Z');
  });

  it('holds a multi-zone area code to every zone it spans', () => {
    const panhandle = placeOfNumber('+18505550143');
    // 08:30 in New York is 07:30 in Chicago.
    const morning = regionalBlock(local('2026-06-10T08:30', NEW_YORK), panhandle.region, panhandle.zones);
    expect(morning?.reason).toBe('regional_hours');
    expect(untilIn(morning, CHICAGO)).toBe('2026-06-10T08:00');
    expect(regionalBlock(local('2026-06-10T08:00', CHICAGO), panhandle.region, panhandle.zones)).toBeNull();
    // 19:30 in Chicago is 20:30 in New York, past Florida's 20:00.
    const evening = regionalBlock(local('2026-06-10T19:30', CHICAGO), panhandle.region, panhandle.zones);
    expect(evening?.reason).toBe('regional_hours');
    expect(untilIn(evening, CHICAGO)).toBe('2026-06-11T08:00');
  });

  it('keeps Arizona on standard time all year', () => {
    for (const day of ['2026-01-14', '2026-07-15']) {
      expect(regionalBlock(new Date(`${day}T14:59:00Z`), 'US-AZ', [PHOENIX])?.until.toISOString()).toBe(`${day}T15:00:00.000Z`);
      expect(regionalBlock(new Date(`${day}T15:00:00Z`), 'US-AZ', [PHOENIX])).toBeNull();
    }
    // The same summer moment is 08:00 in Denver, on daylight time.
    expect(regionalBlock(new Date('2026-07-15T14:00:00Z'), 'US-CO', [DENVER])).toBeNull();
  });

  it('applies the CRTC hours to every Canadian province, shorter at weekends', () => {
    expect(untilIn(regionalBlock(local('2026-06-13T09:59', TORONTO), 'CA-ON', [TORONTO]), TORONTO)).toBe('2026-06-13T10:00');
    expect(regionalBlock(local('2026-06-13T17:59', TORONTO), 'CA-ON', [TORONTO])).toBeNull();
    expect(untilIn(regionalBlock(local('2026-06-13T18:00', TORONTO), 'CA-ON', [TORONTO]), TORONTO)).toBe('2026-06-14T10:00');
    expect(regionalBlock(local('2026-06-10T21:29', TORONTO), 'CA-ON', [TORONTO])).toBeNull();
    expect(untilIn(regionalBlock(local('2026-06-10T21:30', TORONTO), 'CA-ON', [TORONTO]), TORONTO)).toBe('2026-06-11T09:00');
    const north = placeOfNumber('+18675550143');
    expect(regionalBlock(local('2026-06-10T10:00', TORONTO), north.region, north.zones)?.reason).toBe('regional_hours');
  });

  it('checks nothing without a region with rules, or without a zone', () => {
    const night = local('2026-06-10T03:00', NEW_YORK);
    expect(regionalBlock(night, null, [NEW_YORK])).toBeNull();
    expect(regionalBlock(night, 'NZ', ['Pacific/Auckland'])).toBeNull();
    expect(regionalBlock(night, 'JM', ['America/Jamaica'])).toBeNull();
    expect(regionalBlock(night, 'US-TX', [])).toBeNull();
    expect(() => regionalBlock(night, 'US-TX', ['Mars/Olympus_Mons'])).toThrow(RangeError);
  });

  // Three thousand cases of zone arithmetic, each asking the rules three times: seconds of CPU on a
  // quiet machine, many times that on a loaded one, so the limit is well above the suite's default.
  it('ends every block at the first moment every rule allows, in every zone', { timeout: 180_000 }, () => {
    const places = Object.values(areaCodes.codes);
    const ruleRegions = rulesFile.rules.map((rule) => rule.region);
    fc.assert(
      fc.property(
        fc.date({ min: new Date('2025-01-01T00:00:00Z'), max: new Date('2029-01-01T00:00:00Z'), noInvalidDate: true }),
        fc.constantFrom(...places),
        // A contact's own region may replace the number's.
        fc.option(fc.constantFrom(...ruleRegions)),
        (at, place, override) => {
          const region = override ?? place.region;
          const block = regionalBlock(at, region, place.zones);
          if (!block) return;
          expect(block.until.getTime()).toBeGreaterThan(at.getTime());
          expect(block.until.getTime() - at.getTime()).toBeLessThanOrEqual(14 * 86_400_000);
          expect(regionalBlock(block.until, region, place.zones)).toBeNull();
          const minuteBefore = new Date(block.until.getTime() - 60_000);
          if (minuteBefore >= at) expect(regionalBlock(minuteBefore, region, place.zones)).not.toBeNull();
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('the rules table', () => {
  const docs = readFileSync(new URL('../docs/compliance-rules.md', import.meta.url), 'utf8');

  it('gives every rule a citation with a link, and well-formed days', () => {
    expect(RULES_VERSION).toBe(rulesFile.version);
    // One rule in force per region; a bill not yet law may stand beside it.
    const enacted = rulesFile.rules.filter((rule) => !('enacted' in rule) || rule.enacted !== false);
    expect(new Set(enacted.map((rule) => rule.region)).size).toBe(enacted.length);
    for (const rule of rulesFile.rules) {
      expect(rule.name.trim(), rule.region).not.toBe('');
      expect(rule.source, rule.region).toMatch(/\S.*https?:\/\/\S+/);
      for (const day of [...rule.barredDays, ...Object.keys(rule.hours).filter((key) => key !== 'default')])
        expect(WEEKDAYS, rule.region).toContain(day);
    }
  });

  it('is documented: docs/compliance-rules.md names the version and every rule’s region', () => {
    expect(docs).toContain(rulesFile.version);
    for (const rule of rulesFile.rules) expect(docs).toContain(`\`${rule.region}\``);
  });
});

describe('Europe, the UK and the US gaps', () => {
  const PARIS = 'Europe/Paris';
  const MADRID = 'Europe/Madrid';
  const LONDON = 'Europe/London';
  const reasonAt = (wallClock: string, zone: string, region: string, zones = [zone]) =>
    regionalBlock(local(wallClock, zone), region, zones)?.reason ?? null;

  it('holds France to its two windows a day, weekdays only', () => {
    // Wednesday 10 June 2026.
    expect(reasonAt('2026-06-10T09:59', PARIS, 'FR')).toBe('regional_hours');
    expect(reasonAt('2026-06-10T10:00', PARIS, 'FR')).toBeNull();
    expect(reasonAt('2026-06-10T12:59', PARIS, 'FR')).toBeNull();
    const lunch = regionalBlock(local('2026-06-10T13:00', PARIS), 'FR', [PARIS]);
    expect([lunch?.reason, lunch?.region, untilIn(lunch, PARIS)]).toEqual(['regional_hours', 'FR', '2026-06-10T14:00']);
    expect(reasonAt('2026-06-10T19:59', PARIS, 'FR')).toBeNull();
    expect(untilIn(regionalBlock(local('2026-06-10T20:00', PARIS), 'FR', [PARIS]), PARIS)).toBe('2026-06-11T10:00');
    // Saturday 23:00, the call the issue saw: barred, and Monday 10:00 is the next moment.
    const saturday = regionalBlock(local('2026-06-13T23:00', PARIS), 'FR', [PARIS]);
    expect([saturday?.reason, untilIn(saturday, PARIS)]).toEqual(['regional_day', '2026-06-15T10:00']);
  });

  it('bars the French public holidays the library computes (Code du travail L. 3133-1)', () => {
    for (const day of ['2026-05-01', '2026-05-08', '2026-05-14', '2026-05-25', '2026-07-14', '2026-11-11', '2027-03-29'])
      expect(reasonAt(`${day}T11:00`, PARIS, 'FR'), day).toBe('holiday');
    // Ascension 2026 is Thursday 14 May: Friday 10:00 is the next moment.
    expect(untilIn(regionalBlock(local('2026-05-14T11:00', PARIS), 'FR', [PARIS]), PARIS)).toBe('2026-05-15T10:00');
    expect(reasonAt('2026-05-13T11:00', PARIS, 'FR')).toBeNull();
  });

  it('holds Spain to 09:00-21:00 on weekdays that are no national or regional holiday, in the Canaries too', () => {
    const spain = placeOfNumber('+34912345678');
    const reason = (wallClock: string) => regionalBlock(local(wallClock, MADRID), spain.region, spain.zones)?.reason ?? null;
    // 09:30 in Madrid is 08:30 in the Canaries: held until 10:00 in Madrid (09:00 there).
    expect(reason('2026-06-10T09:30')).toBe('regional_hours');
    expect(untilIn(regionalBlock(local('2026-06-10T09:30', MADRID), spain.region, spain.zones), MADRID)).toBe('2026-06-10T10:00');
    expect(reason('2026-06-10T10:00')).toBeNull();
    expect(reason('2026-06-10T20:59')).toBeNull();
    expect(reason('2026-06-10T21:00')).toBe('regional_hours');
    expect(reason('2026-06-13T12:00')).toBe('regional_day');
    expect(reason('2026-10-12T12:00')).toBe('holiday'); // Fiesta Nacional
    expect(reason('2026-04-02T12:00')).toBe('holiday'); // Holy Thursday, a festivo of most communities
    expect(reason('2026-09-11T12:00')).toBe('holiday'); // La Diada, Catalonia's
  });

  it('holds the UK to the DMA hours: 08:00-21:00 on weekdays, 09:00-21:00 at weekends', () => {
    expect(reasonAt('2026-11-04T07:59', LONDON, 'GB')).toBe('regional_hours');
    expect(reasonAt('2026-11-04T08:00', LONDON, 'GB')).toBeNull();
    expect(reasonAt('2026-11-04T21:00', LONDON, 'GB')).toBe('regional_hours');
    expect(untilIn(regionalBlock(local('2026-11-07T08:30', LONDON), 'GB', [LONDON]), LONDON)).toBe('2026-11-07T09:00');
    // 22:00 on a Saturday, the call the issue saw.
    expect(reasonAt('2026-11-07T22:00', LONDON, 'GB')).toBe('regional_hours');
  });

  it('asks no hours of Germany, and consent of Germany, France from 11 August 2026 and Spain', () => {
    expect(reasonAt('2026-11-07T23:00', 'Europe/Berlin', 'DE')).toBeNull();
    expect(regionalConsent(local('2026-11-07T23:00', 'Europe/Berlin'), 'DE', ['Europe/Berlin'])).toEqual({ kind: 'calls', region: 'DE' });
    expect(regionalConsent(local('2026-08-10T23:59', PARIS), 'FR', [PARIS])).toBeNull();
    expect(regionalConsent(local('2026-08-11T00:00', PARIS), 'FR', [PARIS])).toEqual({ kind: 'calls', region: 'FR' });
    expect(regionalConsent(local('2026-06-10T12:00', MADRID), 'ES', [MADRID])).toEqual({ kind: 'calls', region: 'ES' });
    expect(regionalConsent(local('2026-06-10T12:00', 'America/New_York'), 'US-NY', ['America/New_York'])).toBeNull();
    expect(regionalConsent(local('2026-06-10T12:00', LONDON), 'GB', [LONDON])).toBeNull();
  });

  it('reads Mississippi in Central Standard Time all year', () => {
    // Summer: 08:30 CDT is 07:30 CST, too early; 09:00 CDT is 08:00 CST. 20:30 CDT is 19:30 CST, allowed.
    const summer = regionalBlock(local('2026-07-15T08:30', CHICAGO), 'US-MS', [CHICAGO]);
    expect([summer?.reason, summer?.region, untilIn(summer, CHICAGO)]).toEqual(['regional_hours', 'US-MS', '2026-07-15T09:00']);
    expect(reasonAt('2026-07-15T20:30', CHICAGO, 'US-MS')).toBeNull();
    expect(reasonAt('2026-07-15T21:00', CHICAGO, 'US-MS')).toBe('regional_hours'); // 20:00 CST
    // Winter: the wall clock is CST.
    expect(reasonAt('2026-01-14T08:00', CHICAGO, 'US-MS')).toBeNull();
    expect(reasonAt('2026-01-14T20:00', CHICAGO, 'US-MS')).toBe('regional_hours');
  });

  it('bars the state-only holidays, computed, and not elsewhere', () => {
    const cases: [string, string, string][] = [
      ['US-LA', '2026-02-17', CHICAGO], // Mardi Gras
      ['US-LA', '2027-02-09', CHICAGO],
      ['US-LA', '2026-04-03', CHICAGO], // Good Friday
      ['US-PA', '2026-04-03', NEW_YORK], // Good Friday
      ['US-PA', '2026-11-03', NEW_YORK], // Election Day: the Tuesday after the first Monday of November
      ['US-PA', '2027-11-02', NEW_YORK],
      ['US-PA', '2026-06-14', NEW_YORK], // Flag Day
      ['US-UT', '2026-07-24', DENVER], // Pioneer Day
      ['US-RI', '2026-08-10', NEW_YORK], // Victory Day: the second Monday of August
      ['US-AL', '2026-04-27', CHICAGO], // Confederate Memorial Day
      ['US-AL', '2026-06-01', CHICAGO], // Jefferson Davis' birthday
      ['US-AL', '2026-02-17', CHICAGO], // Mardi Gras (Baldwin and Mobile counties)
    ];
    for (const [region, day, zone] of cases) {
      expect(reasonAt(`${day}T12:00`, zone, region), `${region} ${day}`).toBe('holiday');
      expect(reasonAt(`${day}T12:00`, zone, 'US-NY'), `US-NY ${day}`).toBeNull();
    }
  });

  it('keeps the US federal calendar of 5 U.S.C. § 6103, weekend holidays observed on the Friday before or the Monday after', () => {
    // From the statute, by hand: each holiday and, when it falls on a weekend, the day it is observed.
    const statute: Record<number, string[]> = {
      2027: [
        '01-01',
        '01-18',
        '02-15',
        '05-31',
        '06-18',
        '06-19',
        '07-04',
        '07-05',
        '09-06',
        '10-11',
        '11-11',
        '11-25',
        '12-24',
        '12-25',
        '12-31',
      ],
      2028: ['01-01', '01-17', '02-21', '05-29', '06-19', '07-04', '09-04', '10-09', '11-10', '11-11', '11-23', '12-25'],
      2029: ['01-01', '01-15', '02-19', '05-28', '06-19', '07-04', '09-03', '10-08', '11-11', '11-12', '11-22', '12-25'],
      2030: ['01-01', '01-21', '02-18', '05-27', '06-19', '07-04', '09-02', '10-14', '11-11', '11-28', '12-25'],
    };
    for (const [year, days] of Object.entries(statute)) {
      const barred = new Set(days.map((d) => `${year}-${d}`));
      for (let day = DateTime.fromISO(`${year}-01-01`, { zone: DENVER }); day.year === Number(year); day = day.plus({ days: 1 })) {
        if (day.weekday === 7) continue; // Utah bars Sundays anyway
        const iso = day.toISODate()!;
        const reason = regionalBlock(day.set({ hour: 12 }).toJSDate(), 'US-UT', [DENVER])?.reason ?? null;
        // Every federal day is barred; any other holiday is Utah's own Pioneer Day (24 July, or the day it is observed).
        if (barred.has(iso)) expect(reason, iso).toBe('holiday');
        else if (reason === 'holiday') expect(['07-23', '07-24', '07-25'], iso).toContain(iso.slice(5));
      }
    }
  });

  it('does not apply Pennsylvania SB 992 before it is law', () => {
    // A Sunday at 20:00: SB 992 would bar it; the act in force allows it.
    expect(reasonAt('2026-06-14T20:00', NEW_YORK, 'US-PA')).toBe('holiday'); // Flag Day falls on that Sunday
    expect(reasonAt('2026-06-21T20:00', NEW_YORK, 'US-PA')).toBeNull();
    expect(reasonAt('2026-06-22T08:30', NEW_YORK, 'US-PA')).toBeNull();
  });

  it('holds a number with an area code the table lacks to the federal rule in every US zone, or its own state’s zones', () => {
    const unknown = placeOfNumber('+13575550143');
    expect(unknown.region).toBe('US');
    expect(unknown.zones).toEqual(
      expect.arrayContaining([NEW_YORK, CHICAGO, DENVER, 'America/Los_Angeles', 'Pacific/Honolulu', 'America/Anchorage']),
    );
    // 10:00 in New York is 05:00 in Honolulu: too early somewhere.
    const morning = regionalBlock(local('2026-06-10T10:00', NEW_YORK), unknown.region, unknown.zones);
    expect([morning?.reason, morning?.region, untilIn(morning, 'Pacific/Honolulu')]).toEqual(['regional_hours', 'US', '2026-06-10T08:00']);
    expect(zonesOfRegion('US-TX')).toEqual([CHICAGO, DENVER]);
    expect(zonesOfRegion('US-PR')).toEqual(['America/Puerto_Rico']);
    expect(zonesOfRegion('US')).not.toContain('America/Puerto_Rico');
  });

  it('bars a re-call to a UK number within 24 hours of an abandoned call', () => {
    const abandoned = new Date('2026-11-04T10:00:00Z');
    expect(recallBlock(new Date('2026-11-05T09:59:00Z'), 'GB', abandoned)).toEqual({
      region: 'GB',
      until: new Date('2026-11-05T10:00:00Z'),
    });
    expect(recallBlock(new Date('2026-11-05T10:00:00Z'), 'GB', abandoned)).toBeNull();
    expect(recallBlock(new Date('2026-11-04T12:00:00Z'), 'US-NY', abandoned)).toBeNull();
    expect(recallBlock(new Date('2026-11-04T12:00:00Z'), 'GB', null)).toBeNull();
    expect(RECALL_HOURS).toBe(24);
  });
});
