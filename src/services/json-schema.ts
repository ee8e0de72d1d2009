import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FieldErrors } from './errors.js';

// Agent templates describe their placeholders with JSON Schema; agents' variables are checked against it.

const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false });
const compiled = new Map<string, ValidateFunction>();

/** Why `schema` is not a usable JSON Schema for an object of variables, or null when it is. */
export function schemaProblem(schema: unknown): string | null {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'Must be a JSON Schema object.';
  if ((schema as { type?: unknown }).type !== 'object') return 'The schema must describe an object ("type": "object").';
  try {
    ajv.compile(schema);
    return null;
  } catch (error) {
    return `Not a valid JSON Schema: ${(error as Error).message}`;
  }
}

/**
 * Validates `value` (defaults are filled in place) and returns field errors under `prefix`, or null.
 * `cacheKey` names one version of the schema so that it is compiled once.
 */
export function validateAgainst(schema: object, cacheKey: string, value: unknown, prefix: string): FieldErrors | null {
  let validate = compiled.get(cacheKey);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(cacheKey, validate);
  }
  if (validate(value)) return null;
  const errors: FieldErrors = {};
  for (const error of validate.errors ?? []) {
    const [path, message] = describe(error);
    (errors[path ? `${prefix}.${path}` : prefix] ??= []).push(message);
  }
  return errors;
}

function describe(error: ErrorObject): [string, string] {
  const path = error.instancePath.split('/').filter(Boolean).join('.');
  const join = (child: string) => (path ? `${path}.${child}` : child);
  switch (error.keyword) {
    case 'required':
      return [join(String(error.params.missingProperty)), 'This field is required.'];
    case 'additionalProperties':
      return [join(String(error.params.additionalProperty)), 'Unexpected field.'];
    default:
      return [path, error.message ? `${error.message[0]!.toUpperCase()}${error.message.slice(1)}.` : 'Invalid value.'];
  }
}
