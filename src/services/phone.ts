import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';

// Phone numbers are stored in E.164. The "max" metadata validates numbers against each country's real
// numbering plan, not only their length.

export const DEFAULT_COUNTRY: CountryCode = 'US';

/** The number in E.164, or null when it is not a valid phone number. Extensions are dropped. */
export function toE164(raw: string, defaultCountry: string = DEFAULT_COUNTRY): string | null {
  const parsed = parsePhoneNumberFromString(raw.trim(), defaultCountry.toUpperCase() as CountryCode);
  return parsed?.isValid() ? parsed.number : null;
}

export const INVALID_PHONE_MESSAGE = 'Enter a valid phone number, e.g. +14155552671.';
