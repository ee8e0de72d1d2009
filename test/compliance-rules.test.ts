import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { DateTime, IANAZone } from 'luxon';
import { describe, expect, it } from 'vitest';
import { WEEKDAYS } from '../src/services/calling-rules/schedule.js';
import areaCodes from '../src/services/calling-rules/data/nanp-area-codes.json' with { type: 'json' };
import rulesFile from '../src/services/calling-rules/data/calling-rules.json' with { type: 'json' };
import { placeOfNumber } from '../src/services/calling-rules/places.js';
import { regionalBlock, RULES_VERSION } from '../src/services/calling-rules/regional-hours.js';

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

  it('gives no place to toll-free and non-geographic codes, and only the country outside NANP', () => {
    for (const number of ['+18005550199', '+18885550199', '+15005550199', '+19005550199', '+16005550199', '+17005550199'])
      expect(placeOfNumber(number)).toEqual({ region: null, zones: [] });
    expect(placeOfNumber('+442079460958')).toEqual({ region: 'GB', zones: [] });
    expect(placeOfNumber('+4930123456')).toEqual({ region: 'DE', zones: [] });
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
    expect(regionalBlock(night, 'GB', ['Europe/London'])).toBeNull();
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
    expect(new Set(rulesFile.rules.map((rule) => rule.region)).size).toBe(rulesFile.rules.length);
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
