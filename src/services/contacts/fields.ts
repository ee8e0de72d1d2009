// How a row of any shape becomes a contact: header names are matched to the standard fields case- and
// punctuation-insensitively ("Phone Number", "mobile", "First Name", ...); everything else is a custom
// field. Contacts keep their data in this canonical form, so every reader sees the same fields.

import { isTimeZone, timeZoneName } from '../time-zones.js';

export type StandardField =
  | 'first_name'
  | 'last_name'
  | 'full_name'
  | 'email'
  | 'address'
  | 'phone_number'
  | 'phone_numbers'
  | 'timezone'
  | 'region'
  | ConsentField
  | 'consent_source'
  | 'consent_proof';

/** Columns that say a contact gave a consent of a kind: a date (when) or yes; the import records them. */
export const CONSENT_FIELDS = { consent_calls: 'calls', consent_ai_calls: 'ai_calls', consent_recording: 'recording' } as const;
export type ConsentField = keyof typeof CONSENT_FIELDS;

const ALIASES: Record<StandardField, string[]> = {
  first_name: ['firstname', 'first', 'givenname', 'fname', 'forename'],
  last_name: ['lastname', 'last', 'surname', 'familyname', 'lname'],
  full_name: ['name', 'fullname', 'contactname', 'contact'],
  email: ['email', 'emailaddress', 'mail', 'emailid'],
  address: ['address', 'streetaddress', 'street', 'mailingaddress', 'addr', 'fulladdress'],
  phone_number: [
    'phone',
    'phonenumber',
    'phoneno',
    'mobile',
    'mobilephone',
    'mobilenumber',
    'cell',
    'cellphone',
    'cellnumber',
    'telephone',
    'tel',
    'telephonenumber',
    'number',
    'contactnumber',
    'primaryphone',
    'msisdn',
  ],
  phone_numbers: [
    'phonenumbers',
    'phones',
    'otherphone',
    'otherphones',
    'secondaryphone',
    'alternatephone',
    'altphone',
    'additionalphone',
    'additionalphones',
    'workphone',
    'homephone',
    'phone2',
    'phone3',
    'mobile2',
  ],
  timezone: ['timezone', 'tz', 'timezonename', 'zone'],
  region: ['region', 'callingregion', 'regioncode'],
  consent_calls: ['consentcalls', 'callconsent', 'consenttocall', 'callsconsent'],
  consent_ai_calls: ['consentaicalls', 'aicallconsent', 'aicallsconsent', 'consenttoaicalls'],
  consent_recording: ['consentrecording', 'recordingconsent', 'consenttorecord', 'consenttorecording'],
  consent_source: ['consentsource'],
  consent_proof: ['consentproof', 'consentlink', 'consenttext'],
};

/** An ISO 3166-2 region ('US-TX') or country ('CA'), upper case. */
export const REGION = /^[A-Z]{2}(-[A-Z0-9]{1,3})?$/;

const YES = new Set(['yes', 'y', 'true', '1', 'x']);

/** Cells that say the person revoked the consent: a revocation by any reasonable means (FCC 24-24). */
const REVOKED = new Set(['revoked', 'withdrawn', 'opted out', 'opted-out', 'opt-out', 'opt out']);

/**
 * A consent cell: its date (ISO, with the zone it was given in or UTC), `yes` when only given, `revoked`
 * when the person revoked it, else null (no consent).
 */
function consentValue(value: string): string | null {
  if (YES.has(value.toLowerCase())) return 'yes';
  if (REVOKED.has(value.toLowerCase().trim())) return 'revoked';
  if (!/^\d{4}-\d{2}-\d{2}/.test(value)) return null;
  const at = new Date(/[zZ]|[+-]\d{2}:?\d{2}$/.test(value) || value.length === 10 ? value : `${value}Z`);
  return Number.isNaN(at.getTime()) || at.getUTCFullYear() < 1970 ? null : at.toISOString();
}

const BY_ALIAS = new Map<string, StandardField>(
  Object.entries(ALIASES).flatMap(([field, aliases]) => aliases.map((a) => [a, field as StandardField])),
);

export const normalizeHeader = (header: string) => header.toLowerCase().replace(/[^a-z0-9]/g, '');

/** What each column of a file means: a standard field, or a custom field under its own name. */
export interface ColumnPlan {
  header: string;
  field: StandardField | 'custom';
}

/** Assigns columns to fields: the first column of a field wins; later phone columns become extra numbers. */
export function planColumns(headers: string[]): ColumnPlan[] {
  const taken = new Set<StandardField>();
  const plan = headers.map((header): ColumnPlan => {
    const field = BY_ALIAS.get(normalizeHeader(header));
    if (!field) return { header, field: 'custom' };
    if (field === 'phone_numbers') return { header, field };
    if (taken.has(field)) return { header, field: field === 'phone_number' ? 'phone_numbers' : 'custom' };
    taken.add(field);
    return { header, field };
  });
  // A single "Name" column only stands for first and last name when there are no such columns.
  if (taken.has('first_name') || taken.has('last_name')) {
    return plan.map((c) => (c.field === 'full_name' ? { ...c, field: 'custom' } : c));
  }
  return plan;
}

export const hasPhoneColumn = (plan: ColumnPlan[]) => plan.some((c) => c.field === 'phone_number');

export interface PhoneEntry {
  number: string;
  label: string;
}

/** A contact's `data`: standard fields under canonical names, the other columns under `custom_fields`. */
export interface ContactData {
  first_name?: string;
  last_name?: string;
  email?: string;
  address?: string;
  /** The primary number as it was given. */
  phone_number?: string;
  phone_numbers?: PhoneEntry[];
  timezone?: string;
  /** Overrides the region of the number for the regional calling rules. */
  region?: string;
  consent_calls?: string;
  consent_ai_calls?: string;
  consent_recording?: string;
  consent_source?: string;
  consent_proof?: string;
  custom_fields: Record<string, string>;
}

/** A cell as text: trimmed, blank when absent. */
const cellText = (raw: unknown) => (raw === null || raw === undefined ? '' : String(raw).trim());

/** A cell of an extra-numbers column may hold several numbers. */
const splitNumbers = (value: string) =>
  value
    .split(/[;,|]/)
    .map((v) => v.trim())
    .filter(Boolean);

/** Reads one number: E.164 when it is a valid phone number, else null (`toE164` with the import's country). */
export type NumberReader = (raw: string) => string | null;

/** Builds the canonical data of one row; blanks are left out. Extra numbers are kept in E.164 where they read as one. */
export function canonicalData(plan: ColumnPlan[], row: Record<string, unknown>, readNumber: NumberReader): ContactData {
  const data: ContactData = { custom_fields: {} };
  for (const { header, field } of plan) {
    const value = cellText(row[header]);
    if (!value) continue;
    switch (field) {
      case 'custom':
        data.custom_fields[header] = value;
        break;
      case 'full_name': {
        const [first, ...rest] = value.split(/\s+/);
        data.first_name = first;
        if (rest.length) data.last_name = rest.join(' ');
        break;
      }
      case 'phone_numbers':
        for (const raw of splitNumbers(value)) (data.phone_numbers ??= []).push({ number: readNumber(raw) ?? raw, label: header });
        break;
      case 'timezone':
        // Kept as given when it names no zone, so that the caller can refuse it by its column.
        data.timezone = timeZoneName(value) ?? value;
        break;
      case 'region':
        // A value that is no region stays, as a custom field, rather than be lost or misread.
        if (REGION.test(value.toUpperCase())) data.region = value.toUpperCase();
        else data.custom_fields[header] = value;
        break;
      case 'consent_calls':
      case 'consent_ai_calls':
      case 'consent_recording': {
        const consent = consentValue(value);
        if (consent) data[field] = consent;
        else data.custom_fields[header] = value;
        break;
      }
      default:
        data[field] = value;
    }
  }
  return data;
}

/** The column of a row whose time zone names no zone of the tz database; null when the row has a known zone or none. */
export function unknownTimeZoneColumn(plan: ColumnPlan[], data: ContactData): string | null {
  if (data.timezone === undefined || isTimeZone(data.timezone)) return null;
  return plan.find((c) => c.field === 'timezone')!.header;
}

/** Merges `patch` into `base`: later non-blank values win, extra numbers and custom fields accumulate. */
export function mergeData(base: ContactData, patch: ContactData): ContactData {
  const numbers = [...(base.phone_numbers ?? [])];
  for (const entry of patch.phone_numbers ?? []) {
    if (!numbers.some((n) => n.number === entry.number)) numbers.push(entry);
  }
  const { custom_fields: _base, phone_numbers: _n1, ...baseStandard } = base;
  const { custom_fields: _patch, phone_numbers: _n2, ...patchStandard } = patch;
  return {
    ...baseStandard,
    ...patchStandard,
    ...(numbers.length ? { phone_numbers: numbers } : {}),
    custom_fields: { ...base.custom_fields, ...patch.custom_fields },
  };
}

export function displayName({ first_name: first, last_name: last }: ContactData): string {
  return (first && last ? `${first} ${last}` : first || last || '').slice(0, 512);
}

/** Reads stored data defensively: rows written by older code or by hand may lack fields. */
export function readData(stored: unknown): ContactData {
  const data = (stored && typeof stored === 'object' ? stored : {}) as Partial<ContactData>;
  return { ...data, custom_fields: data.custom_fields ?? {} } as ContactData;
}

/** A contact's data with the columns kept in step with it: the display name and its time zone when valid. */
export function withColumns(data: ContactData): { data: ContactData; name: string; timezone: string | null } {
  return { data, name: displayName(data), timezone: data.timezone ? timeZoneName(data.timezone) : null };
}
