import fc from 'fast-check';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { describe, expect, it } from 'vitest';
import { toE164 } from '../src/services/phone.js';

// toE164 calls the library's parse() directly, skipping parsePhoneNumberFromString's argument handling;
// every number must read exactly as parsePhoneNumberFromString reads it.

function publicE164(raw: string, country: string): string | null {
  const parsed = parsePhoneNumberFromString(raw.trim(), country.toUpperCase() as Parameters<typeof parsePhoneNumberFromString>[1]);
  return parsed?.isValid() ? parsed.number : null;
}

const COUNTRIES = ['US', 'us', 'CA', 'GB', 'DE', 'FR', 'IN', 'BR', 'JP', 'AU', 'MX', 'JM', 'XX', 'ZZ', ''];

const NUMBERS = [
  '(415) 555-2671',
  '+1 415 555 2671',
  '415.555.2671',
  '14155552671',
  '011 44 20 7946 0958',
  '+44 20 7946 0958',
  '020 7946 0958',
  '+442079460958',
  '030 1234567',
  '+49 30 1234567',
  '01 23 45 67 89',
  '+91 98765 43210',
  '+55 11 91234-5678',
  '03-1234-5678',
  '+61 2 9876 5432',
  '+1 876 555 0123',
  '(876) 555-0123',
  '800-555-0199',
  '415.555.2671 x12',
  '415-555-2671 ext. 99',
  '+1 (415) 555-2671;ext=7',
  // Not 'tel:...;phone-context=...': the library reads those with a global regular expression whose
  // lastIndex carries over, so that every other call fails, whichever entry point it comes through.
  'tel:+1-415-555-2671',
  '+１ ４１５ ５５５ ２６７１',
  '12345',
  '1',
  '',
  '   ',
  'not a number',
  '+',
  '++14155552671',
  '+999 123 456 789',
  '4155552671#',
  '  (212) 555-0143  ',
  '1'.repeat(251),
];

describe('toE164', () => {
  it('reads known numbers in many countries as parsePhoneNumberFromString does', () => {
    for (const country of COUNTRIES) {
      for (const number of NUMBERS)
        expect([number, country, toE164(number, country)]).toEqual([number, country, publicE164(number, country)]);
    }
  });

  it('reads generated numbers as parsePhoneNumberFromString does', () => {
    const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^[0-9]{${min},${max}}$`));
    const punctuation = fc.constantFrom('', ' ', '-', '.', '(', ')', '/', ' x', ' ext ', '#', ';', ',', '+', 'a');
    const number = fc.oneof(
      digits(1, 17),
      fc.tuple(fc.constantFrom('', '+', '+1 ', '1', '0', '00', '011', '+44 ', '+49'), digits(2, 14)).map(([a, b]) => a + b),
      fc.array(fc.tuple(digits(1, 4), punctuation), { minLength: 1, maxLength: 6 }).map((parts) => parts.flat().join('')),
      fc.string({ maxLength: 20 }),
    );
    fc.assert(
      fc.property(number, fc.constantFrom(...COUNTRIES), (raw, country) => {
        expect(toE164(raw, country)).toBe(publicE164(raw, country));
      }),
      { numRuns: 20_000, seed: 18 },
    );
  });
});
