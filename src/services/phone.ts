import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type * as core from 'libphonenumber-js/core';
import type { CountryCode, MetadataJson, PhoneNumber } from 'libphonenumber-js/core';

// Phone numbers are stored in E.164. The "max" metadata validates numbers against each country's real
// numbering plan, not only their length.
//
// parsePhoneNumberFromString is the library's parse() behind argument handling (Babel's object spread,
// three times) that costs a third of each call, and an import reads 100,000 numbers. toE164 calls that
// parse() with the options parsePhoneNumberFromString would build, so every number reads as before
// (test/phone.test.ts compares them). The package does not export parse(), hence its path; its CommonJS
// build, which require() loads as this module loads, with no top-level await.

type Options = { defaultCountry: CountryCode | undefined; v2: true };
const require = createRequire(import.meta.url);
const library = dirname(require.resolve('libphonenumber-js/package.json'));
const { default: parse } = require(`${library}/build/parse.js`) as {
  default: (text: string, options: Options, metadata: MetadataJson) => PhoneNumber;
};
const { ParseError, isSupportedCountry } = require('libphonenumber-js/core') as typeof core;
const metadata = require('libphonenumber-js/metadata.max.json') as MetadataJson;

export const DEFAULT_COUNTRY: CountryCode = 'US';

/** parse()'s options for each country it knows; parsePhoneNumberFromString reads others as no country at all. */
const optionsByCountry = new Map<string, Options>();
const NO_COUNTRY: Options = { defaultCountry: undefined, v2: true };

function optionsFor(country: string): Options {
  let options = optionsByCountry.get(country);
  if (!options) {
    if (!isSupportedCountry(country as CountryCode, metadata)) return NO_COUNTRY;
    options = { defaultCountry: country as CountryCode, v2: true };
    optionsByCountry.set(country, options);
  }
  return options;
}

/** The number in E.164, or null when it is not a valid phone number. Extensions are dropped. */
export function toE164(raw: string, defaultCountry: string = DEFAULT_COUNTRY): string | null {
  let parsed: PhoneNumber;
  try {
    parsed = parse(raw.trim(), optionsFor(defaultCountry.toUpperCase()), metadata);
  } catch (error) {
    if (error instanceof ParseError) return null;
    throw error;
  }
  return parsed.isValid() ? parsed.number : null;
}

export const INVALID_PHONE_MESSAGE = 'Enter a valid phone number, e.g. +14155552671.';
