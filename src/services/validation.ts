import { z } from 'zod';
import { NON_FIELD, ValidationError, type FieldErrors } from './errors.js';
import { timeZoneName, UNKNOWN_TIME_ZONE } from './time-zones.js';

// Input validation for both surfaces. Messages follow Django REST Framework's wording, which v1 clients
// display to people; GraphQL carries the same messages in `extensions.fieldErrors`.

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

function messageFor(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'This field is required.';
      if (issue.input === null) return 'This field may not be null.';
      if (issue.expected === 'string') return 'Not a valid string.';
      if (issue.expected === 'number' || issue.expected === 'int' || issue.expected === 'bigint') return 'A valid integer is required.';
      if (issue.expected === 'boolean') return 'Must be a valid boolean.';
      if (issue.expected === 'array') return `Expected a list of items but got type "${jsonTypeOf(issue.input)}".`;
      if (issue.expected === 'object' || issue.expected === 'record')
        return `Expected a dictionary of items but got type "${jsonTypeOf(issue.input)}".`;
      return undefined;
    case 'too_big':
      if (issue.origin === 'string') return `Ensure this field has no more than ${issue.maximum} characters.`;
      if (issue.origin === 'array') return `Ensure this field has no more than ${issue.maximum} elements.`;
      return `Ensure this value is less than or equal to ${issue.maximum}.`;
    case 'too_small':
      if (issue.origin === 'string') {
        return issue.minimum === 1 ? 'This field may not be blank.' : `Ensure this field has at least ${issue.minimum} characters.`;
      }
      if (issue.origin === 'array')
        return issue.minimum === 1 ? 'This list may not be empty.' : `Ensure this field has at least ${issue.minimum} elements.`;
      return `Ensure this value is greater than or equal to ${issue.minimum}.`;
    case 'invalid_format':
      if (issue.format === 'uuid' || issue.format === 'guid') return 'Must be a valid UUID.';
      if (issue.format === 'datetime') return 'Datetime has wrong format. Use ISO 8601, e.g. 2026-01-31T09:00:00Z.';
      if (issue.format === 'email') return 'Enter a valid email address.';
      if (issue.format === 'url') return 'Enter a valid URL.';
      return undefined;
    case 'invalid_value':
      return `"${String(issue.input)}" is not a valid choice.`;
    case 'unrecognized_keys':
      return `Unexpected field(s): ${issue.keys.join(', ')}.`;
    default:
      return undefined;
  }
}

function jsonTypeOf(value: unknown): string {
  if (Array.isArray(value)) return 'list';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'dict';
  return typeof value === 'number' ? (Number.isInteger(value) ? 'int' : 'float') : typeof value === 'string' ? 'str' : typeof value;
}

z.config({ customError: (issue) => messageFor(issue) });

export function fieldErrorsOf(error: z.ZodError): FieldErrors {
  const out: FieldErrors = {};
  for (const issue of error.issues) {
    const path = issue.code === 'unrecognized_keys' || issue.path.length === 0 ? NON_FIELD : issue.path.join('.');
    (out[path] ??= []).push(issue.message);
  }
  return out;
}

/** An input as a surface hands it over: the expected keys, values not yet checked. */
export type RawInput<S extends z.ZodType> = { [K in keyof z.input<S>]?: unknown };

/** Parses `input` with `schema`, or throws a ValidationError naming each bad field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new ValidationError(fieldErrorsOf(result.error));
  return result.data;
}

/**
 * A signed 64-bit integer: a number, a bigint (JSON integers beyond 2^53 arrive as bigint so nothing is
 * rounded) or a string of digits (form bodies). Values outside the range are errors, never clamped.
 */
export const int64 = z.union([z.number(), z.bigint(), z.string()], { error: 'A valid integer is required.' }).transform((value, ctx) => {
  let big: bigint;
  if (typeof value === 'bigint') big = value;
  else if (typeof value === 'number' && Number.isInteger(value)) big = BigInt(value);
  else if (typeof value === 'string' && /^\s*[-+]?\d+\s*$/.test(value)) big = BigInt(value.trim());
  else {
    ctx.addIssue({ code: 'custom', message: 'A valid integer is required.' });
    return z.NEVER;
  }
  if (big > INT64_MAX) {
    ctx.addIssue({ code: 'custom', message: `Ensure this value is less than or equal to ${INT64_MAX}.` });
    return z.NEVER;
  }
  if (big < INT64_MIN) {
    ctx.addIssue({ code: 'custom', message: `Ensure this value is greater than or equal to ${INT64_MIN}.` });
    return z.NEVER;
  }
  return big;
});

/**
 * A list, checked but not copied as `z.array` would copy it: a large import lets go of its rows one by
 * one as it reads them, which frees memory only when no copy holds them too. Same messages as `z.array`.
 */
export const listInPlace = z.custom<unknown[]>().superRefine((value, ctx) => {
  if (!Array.isArray(value)) ctx.addIssue({ code: 'invalid_type', expected: 'array', input: value });
});

/**
 * Each value once, in first-seen order. Filter lists go through it: a list of 32,767 or more values
 * would exceed PostgreSQL's bind parameters, and a list of enum values is never longer than the enum.
 */
export const distinct = <T>(values: readonly T[]): T[] => [...new Set(values)];

/** A zone or link of the IANA tz database (services/time-zones.ts), in any case; read as the database spells it. */
export const timeZone = z
  .string()
  .trim()
  .max(64)
  .transform((zone, ctx) => {
    const name = timeZoneName(zone);
    if (name === null) ctx.addIssue({ code: 'custom', message: UNKNOWN_TIME_ZONE });
    return name ?? z.NEVER;
  });

/** Any RFC 4122-shaped id; PostgreSQL's uuid type accepts every version, so we do too. */
export const uuid = z.guid();

/** A JSON value that an object-typed field expects (form bodies send it as a JSON string). */
export const jsonObject = z.record(z.string(), z.unknown());

/**
 * Validated by `schema`, described as `doc` in the JSON Schema that the OpenAPI document prints: for
 * schemas whose own description would be unhelpful (int64's union becomes "anything").
 */
export const describedAs = <S extends z.ZodType>(schema: S, doc: Record<string, unknown>) => z.unknown().pipe(schema).meta(doc);
