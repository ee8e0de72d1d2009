import { NON_FIELD, ValidationError } from './errors.js';
import { BACKSLASH, CLOSE_LIST, CLOSE_OBJECT, OPEN_LIST, OPEN_OBJECT, QUOTE } from '../json-bytes.js';

// What no input may carry, whatever field it is in: nesting deeper than any real document needs (the
// parsers, validators and Prisma after this check recurse, and overflow the stack on a deep enough one),
// and text that PostgreSQL cannot store (NUL characters, lone UTF-16 surrogates). Both surfaces refuse
// such input as a whole before anything else reads it, as DRF refuses NUL characters.

/** The deepest nesting of objects and lists an input may have; the body (or GraphQL variables) is level 1. */
export const MAX_INPUT_DEPTH = 32;

export const TOO_DEEP_MESSAGE = `Ensure this value is nested no more than ${MAX_INPUT_DEPTH} levels deep.`;
const NULL_CHARACTER_MESSAGE = 'Null characters are not allowed.';
export const LONE_SURROGATE_MESSAGE = 'Text must be valid Unicode: lone surrogate characters are not allowed.';

/**
 * Instants every date input accepts: the years a four-digit ISO 8601 year names, in UTC. PostgreSQL's
 * timestamptz refuses year 0 (1 BC), and a year past 9999 is stored but cannot be read back as ISO 8601.
 */
const STORABLE_INSTANTS = { min: new Date('0001-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z') };
export const INSTANT_RANGE_MESSAGE = 'Ensure this date-time is between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z.';

export const isStorableInstant = (date: Date) =>
  date.getTime() >= STORABLE_INSTANTS.min.getTime() && date.getTime() <= STORABLE_INSTANTS.max.getTime();

export interface UnsafeInput {
  /** Keys from the input's root (`['csvData', 0, 'Notes']`); empty for the root itself. */
  path: (string | number)[];
  message: string;
}

/** Why PostgreSQL could not store this text as sent, or null. */
export function textProblem(text: string): string | null {
  if (text.includes('\u0000')) return NULL_CHARACTER_MESSAGE;
  if (!text.isWellFormed()) return LONE_SURROGATE_MESSAGE;
  return null;
}

/** An object or list still to be looked into. */
interface Frame {
  value: object;
  /** Levels of objects and lists down to this one, the input itself being 1. */
  depth: number;
  key: string | number | undefined;
  parent: Frame | undefined;
}

/**
 * Lists and plain objects, all that JSON and forms produce. Anything else is not looked into: the files
 * of a multipart request (whichever File class the parser made), whose bytes are no input's structure.
 */
function isContainer(value: unknown): value is object {
  if (Array.isArray(value)) return true;
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * The first thing in `input` that no input may carry, or null. Iterative, so that its own stack stays
 * flat whatever the depth; each object or list is looked through (its keys and texts) before the ones
 * inside it.
 */
export function findUnsafeInput(input: unknown): UnsafeInput | null {
  if (typeof input === 'string') {
    const problem = textProblem(input);
    return problem ? { path: [], message: problem } : null;
  }
  if (!isContainer(input)) return null;
  const stack: Frame[] = [{ value: input, depth: 1, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const list = Array.isArray(frame.value) ? (frame.value as unknown[]) : undefined;
    const keys = list ? undefined : Object.keys(frame.value);
    const inner: Frame[] = [];
    for (let i = 0; i < (list ?? keys!).length; i += 1) {
      const key = list ? i : keys![i]!;
      const value = list ? list[i] : (frame.value as Record<string, unknown>)[key];
      const problem = (typeof key === 'string' ? textProblem(key) : null) ?? (typeof value === 'string' ? textProblem(value) : null);
      if (problem) return { path: [...pathOf(frame), key], message: problem };
      if (!isContainer(value)) continue;
      if (frame.depth + 1 > MAX_INPUT_DEPTH) return { path: [...pathOf(frame), key], message: TOO_DEEP_MESSAGE };
      inner.push({ value, depth: frame.depth + 1, key, parent: frame });
    }
    // Pushed last to first, so that they are looked into first to last.
    for (let i = inner.length - 1; i >= 0; i -= 1) stack.push(inner[i]!);
  }
  return null;
}

/** The path is only built for a find, so a large clean input costs nothing for it. */
function pathOf(frame: Frame): (string | number)[] {
  const keys: (string | number)[] = [];
  for (let at: Frame | undefined = frame; at?.key !== undefined; at = at.parent) keys.push(at.key);
  return keys.reverse();
}

/** A path as field errors name it: `csvData.0.Notes`, or `non_field_errors` for the whole input. */
export const fieldPath = (path: (string | number)[]) => (path.length > 0 ? path.join('.') : NON_FIELD);

/** Throws a ValidationError naming the first thing in `input` that no input may carry. */
export function refuseUnsafeInput(input: unknown): void {
  const found = findUnsafeInput(input);
  if (found) throw ValidationError.field(fieldPath(found.path), found.message);
}

/**
 * Whether JSON text nests deeper than MAX_INPUT_DEPTH, found in one pass over the text before any
 * parser sees it: lossless-json's parser recurses, and JSON.parse builds a structure as deep as the text
 * (a 25 MB run of `[` takes seconds and gigabytes). Brackets inside strings do not count.
 */
export function jsonTextTooDeep(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i += 1;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_LIST || c === OPEN_OBJECT) {
      depth += 1;
      if (depth > MAX_INPUT_DEPTH) return true;
    } else if (c === CLOSE_LIST || c === CLOSE_OBJECT) depth -= 1;
  }
  return false;
}

/** Throws the ValidationError of input nested too deep when JSON text is. */
export function refuseDeepJsonText(text: string): void {
  if (jsonTextTooDeep(text)) throw ValidationError.field(NON_FIELD, TOO_DEEP_MESSAGE);
}
