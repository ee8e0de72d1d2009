import { describe, expect, it } from 'vitest';
import { registryBlock, staleCopies, staleDetail } from '../src/services/calling-rules/registries.js';
import { LineSplitter, parseLine } from '../src/services/registries/formats.js';

// The registries' rules on plain values: the lines of each registry's file, a copy's age, and who a
// solicitation may call on a registry.

describe('registry file lines', () => {
  it('reads NANP numbers as the FTC and the DNCL give them, and refuses anything else', () => {
    expect(parseLine('us_dnc', '2025550123')).toEqual({ digits: '12025550123', prefix: '202' });
    expect(parseLine('us_dnc', '202,5550123\r')).toEqual({ digits: '12025550123', prefix: '202' });
    expect(parseLine('ca_dncl', ' 4165550123 ')).toEqual({ digits: '14165550123', prefix: '416' });
    expect(parseLine('us_dnc', '')).toBe('blank');
    for (const bad of [
      '12025550123',
      '202555012',
      '1025550123',
      '2021550123',
      '202-555-0123',
      '+12025550123',
      '20255501x3',
      '20,25550123',
    ]) {
      expect(parseLine('us_dnc', bad)).toBeNull();
    }
  });

  it('reads UK numbers in national format', () => {
    expect(parseLine('uk_tps', '02079460000')).toEqual({ digits: '442079460000', prefix: '020' });
    expect(parseLine('uk_ctps', '0163296000')).toEqual({ digits: '44163296000', prefix: '016' });
    for (const bad of ['2079460000', '00079460000', '020794600001', '020 7946 0000', '+442079460000', '020794600']) {
      expect(parseLine('uk_tps', bad)).toBeNull();
    }
  });

  it('cuts a stream into lines wherever its chunks end', () => {
    const splitter = new LineSplitter();
    expect(splitter.push('2025550')).toEqual([]);
    expect(splitter.push('123\n2025550124\n20255')).toEqual(['2025550123', '2025550124']);
    expect(splitter.push('50125')).toEqual([]);
    expect(splitter.end()).toEqual(['2025550125']);
  });
});

describe('a copy’s age', () => {
  const now = new Date('2026-12-02T23:59:00Z');
  it('is stale past 31 days for the US and Canada, 28 for TPS and CTPS, counted in UTC days', () => {
    const copies = [
      { registry: 'us_dnc' as const, downloadedOn: new Date('2026-11-01T00:00:00Z') }, // 31 days
      { registry: 'ca_dncl' as const, downloadedOn: new Date('2026-10-31T00:00:00Z') }, // 32 days
      { registry: 'uk_tps' as const, downloadedOn: new Date('2026-11-04T00:00:00Z') }, // 28 days
      { registry: 'uk_ctps' as const, downloadedOn: new Date('2026-11-03T00:00:00Z') }, // 29 days
    ];
    const stale = staleCopies(copies, now);
    expect(stale).toEqual([
      { registry: 'ca_dncl', ageDays: 32 },
      { registry: 'uk_ctps', ageDays: 29 },
    ]);
    expect(staleDetail(stale)).toBe(
      'the copy of the Canada National DNCL is 32 days old (at most 31); the copy of the UK CTPS is 29 days old (at most 28)',
    );
  });
});

describe('who a solicitation may call on a registry', () => {
  const now = new Date('2026-11-20T12:00:00Z');
  const on = { registry: 'us_dnc' as const, consentsToCalls: false, relationshipSince: null };
  it('blocks a registered number without consent or relationship, for solicitation only', () => {
    expect(registryBlock('solicitation', on, now)).toBe('us_dnc');
    expect(registryBlock('informational', on, now)).toBeNull();
    expect(registryBlock('solicitation', { ...on, registry: null }, now)).toBeNull();
    expect(registryBlock('solicitation', { ...on, consentsToCalls: true }, now)).toBeNull();
  });

  it('lets a business relationship count for 18 months', () => {
    const since = (at: string) => ({ ...on, relationshipSince: new Date(at) });
    expect(registryBlock('solicitation', since('2025-05-20T12:00:01Z'), now)).toBeNull();
    expect(registryBlock('solicitation', since('2025-05-20T12:00:00Z'), now)).toBe('us_dnc');
  });
});
