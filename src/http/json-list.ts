import { findUnsafeInput, jsonTextTooDeep, MAX_INPUT_DEPTH } from '../services/input-safety.js';
import { LOSSLESS_NUMBER, type ArrivingBody } from './body.js';
import { BACKSLASH, CLOSE_LIST, CLOSE_OBJECT, COLON, COMMA, OPEN_LIST, OPEN_OBJECT, QUOTE } from '../json-bytes.js';

// A JSON body whose last field holds a long list of objects (an import's rows), read as it arrives: the
// fields before the list as soon as they are in, then the list's objects in batches, each parsed by
// JSON.parse as readBody parses the whole text, and checked as the router checks a whole body, so that
// the work on them can start before the body has all arrived and without holding all of it as objects.
// Whatever this cannot read exactly as readBody and the router would (another shape, the list not last, a
// number readBody reads losslessly, text no input may carry, nesting too deep, invalid JSON) throws
// NotStreamable, and the caller reads the whole body with readBody instead, which decides the answer.

export class NotStreamable extends Error {
  constructor() {
    super('The body cannot be read as it arrives.');
  }
}

export interface StreamedList {
  /** The body's fields before the list, as JSON.parse reads them. */
  head: Record<string, unknown>;
  /**
   * The list's items in order, in batches of about `batchBytes` of text (an item longer than that makes a
   * batch of its own). It is done only once the body has ended as the JSON object it began.
   */
  items: AsyncGenerator<unknown[], void, undefined>;
}

/** The fields before the list must arrive within this many bytes; a body with a longer head is read whole. */
const MAX_HEAD_BYTES = 64 * 1024;
/** How far back from the end endsWithOtherField looks for the body's last field. */
const LOOK_BACK = 64 * 1024;
/** The list's items are objects inside the list inside the body: at depth 3 of MAX_INPUT_DEPTH. */
const LIST_DEPTH = 2;

/** JSON's white space: space, tab, line feed, carriage return. */
const isSpace = (byte: number | undefined) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

function skipSpace(bytes: Uint8Array, at: number): number {
  while (isSpace(bytes[at])) at += 1;
  return at;
}

/**
 * The end (after its closing quote) of the string whose text starts at `from`; when that has not all
 * arrived, -1 minus where to go on from (a backslash at the end waits for the character it escapes).
 */
function stringEnd(bytes: Uint8Array, from: number): number {
  let at = from;
  for (; at < bytes.length; at += 1) {
    const byte = bytes[at];
    if (byte === QUOTE) return at + 1;
    if (byte === BACKSLASH) {
      if (at + 1 === bytes.length) break;
      at += 1;
    }
  }
  return -1 - at;
}

/** The end of the value that starts at `at`, or -1 when it has not all arrived; JSON.parse checks it later. */
function valueEnd(bytes: Uint8Array, at: number): number {
  let depth = 0;
  for (let i = at; i < bytes.length;) {
    const byte = bytes[i]!;
    if (byte === QUOTE) {
      i = stringEnd(bytes, i + 1);
      if (i < 0) return -1;
      if (depth === 0) return i;
    } else if (byte === OPEN_OBJECT || byte === OPEN_LIST) {
      depth += 1;
      i += 1;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_LIST || byte === COMMA || isSpace(byte)) {
      if (depth === 0) return i;
      if (byte === CLOSE_OBJECT || byte === CLOSE_LIST) depth -= 1;
      i += 1;
      if (depth === 0) return i;
    } else i += 1;
  }
  return -1;
}

/**
 * Where the fields before the list end and the list's items begin, or undefined when more must arrive
 * first. Throws NotStreamable when the body is not an object whose fields lead to the list.
 */
function findList(bytes: Uint8Array, key: Uint8Array): { headEnd: number; itemsStart: number } | undefined {
  let at = skipSpace(bytes, 0);
  if (at >= bytes.length) return undefined;
  if (bytes[at] !== OPEN_OBJECT) throw new NotStreamable();
  let headEnd = at + 1;
  for (at += 1; ;) {
    at = skipSpace(bytes, at);
    if (at >= bytes.length) return undefined;
    if (bytes[at] !== QUOTE) throw new NotStreamable();
    const keyEnd = stringEnd(bytes, at + 1);
    if (keyEnd < 0) return undefined;
    const isList = keyEnd - at === key.length && key.every((byte, i) => bytes[at + i] === byte);
    at = skipSpace(bytes, keyEnd);
    if (at >= bytes.length) return undefined;
    if (bytes[at] !== COLON) throw new NotStreamable();
    at = skipSpace(bytes, at + 1);
    if (at >= bytes.length) return undefined;
    if (isList) {
      if (bytes[at] !== OPEN_LIST) throw new NotStreamable();
      return { headEnd, itemsStart: at + 1 };
    }
    const end = valueEnd(bytes, at);
    if (end < 0) return undefined;
    headEnd = end;
    at = skipSpace(bytes, end);
    if (at >= bytes.length) return undefined;
    if (bytes[at] !== COMMA) throw new NotStreamable();
    at += 1;
  }
}

/** Where the string whose closing quote is at `close` opens, looking back no further than `limit`; -1 if not there. */
function stringStartBefore(bytes: Uint8Array, close: number, limit: number): number {
  for (let at = close - 1; at >= limit; at -= 1) {
    if (bytes[at] !== QUOTE) continue;
    let slashes = 0;
    while (bytes[at - 1 - slashes] === BACKSLASH) slashes += 1;
    if (slashes % 2 === 0) return at;
  }
  return -1;
}

/**
 * Whether the body's object surely ends with a field other than the list, told from its last bytes once it
 * has all arrived (`{..., "csvData": [...], "selectedHeaders": [...]}`): what was read of the list would be
 * undone at the end. False when it cannot tell within LOOK_BACK bytes, or the end is no valid JSON.
 */
function endsWithOtherField(bytes: Uint8Array, key: Uint8Array): boolean {
  const limit = Math.max(0, bytes.length - LOOK_BACK);
  const back = (from: number) => {
    let at = from;
    while (at >= limit && isSpace(bytes[at])) at -= 1;
    return at;
  };
  let at = back(bytes.length - 1);
  if (at < limit || bytes[at] !== CLOSE_OBJECT) return false;
  // Back to the first byte of the last field's value.
  let depth = 0;
  for (at = back(at - 1); ; at -= 1) {
    if (at < limit) return false;
    const byte = bytes[at];
    if (byte === QUOTE) {
      at = stringStartBefore(bytes, at, limit);
      if (at < 0) return false;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_LIST) depth += 1;
    else if (byte === OPEN_OBJECT || byte === OPEN_LIST) depth -= 1;
    else if (depth === 0) {
      // A number, true, false or null.
      while (at - 1 >= limit && !isSpace(bytes[at - 1]) && bytes[at - 1] !== COLON) at -= 1;
    }
    if (depth === 0) break;
  }
  at = back(at - 1);
  if (at < limit || bytes[at] !== COLON) return false;
  at = back(at - 1);
  if (at < limit || bytes[at] !== QUOTE) return false;
  const keyStart = stringStartBefore(bytes, at, limit);
  if (keyStart < 0) return false;
  return !(at + 1 - keyStart === key.length && key.every((byte, i) => bytes[keyStart + i] === byte));
}

/** Reads the body's fields up to the list `field`; the list's items follow through `items`. */
export async function streamJsonList(body: ArrivingBody, field: string, batchBytes: number): Promise<StreamedList> {
  const key = new TextEncoder().encode(JSON.stringify(field));
  let found = findList(body.bytes, key);
  while (!found) {
    const seen = body.bytes.length;
    if (seen > MAX_HEAD_BYTES || !(await body.more(seen))) throw new NotStreamable();
    found = findList(body.bytes, key);
  }
  const decoder = new TextDecoder();
  const headText = `${decoder.decode(body.bytes.subarray(0, found.headEnd))}}`;
  if (LOSSLESS_NUMBER.test(headText) || jsonTextTooDeep(headText)) throw new NotStreamable();
  let head: Record<string, unknown>;
  try {
    head = JSON.parse(headText) as Record<string, unknown>;
  } catch {
    throw new NotStreamable();
  }
  // A field of that name before the list (spelled with escapes) would be another JSON.parse would drop.
  if (Object.hasOwn(head, field) || findUnsafeInput(head)) throw new NotStreamable();
  return { head, items: readItems(body, key, found.itemsStart, batchBytes, decoder) };
}

async function* readItems(
  body: ArrivingBody,
  key: Uint8Array,
  start: number,
  batchBytes: number,
  decoder: TextDecoder,
): AsyncGenerator<unknown[], void, undefined> {
  let at = start;
  /** Inside an item: how deep (its own braces are 1); 0 between items. */
  let depth = 0;
  let inString = false;
  let expectItem = true;
  let first = true;
  let closed = false;
  let batchStart = -1;
  let batchEnd = -1;
  const batch = (bytes: Uint8Array) => {
    const items = parseItems(bytes.subarray(batchStart, batchEnd), decoder);
    if (!items) throw new NotStreamable();
    batchStart = -1;
    return items;
  };
  let lastFieldKnown = false;
  while (!closed) {
    const bytes = body.bytes;
    if (!lastFieldKnown && body.complete) {
      // Rows sent before other fields are read whole, rather than read here and undone at the end.
      lastFieldKnown = true;
      if (endsWithOtherField(bytes, key)) throw new NotStreamable();
    }
    while (at < bytes.length) {
      if (inString) {
        const end = stringEnd(bytes, at);
        if (end < 0) {
          at = -1 - end;
          break;
        }
        at = end;
        inString = false;
      } else if (depth > 0) {
        const byte = bytes[at++]!;
        if (byte === QUOTE) inString = true;
        else if (byte === OPEN_OBJECT || byte === OPEN_LIST) {
          depth += 1;
          if (LIST_DEPTH + depth > MAX_INPUT_DEPTH) throw new NotStreamable();
        } else if ((byte === CLOSE_OBJECT || byte === CLOSE_LIST) && --depth === 0) {
          batchEnd = at;
          expectItem = false;
        }
      } else {
        if (expectItem && batchStart < 0 && bytes[at] === OPEN_OBJECT) {
          const quick = quickBatch(bytes, at, batchBytes, decoder);
          if (quick) {
            at = quick.next;
            first = false;
            yield quick.items;
            continue;
          }
        }
        const byte = bytes[at++]!;
        if (isSpace(byte)) continue;
        if (expectItem && byte === OPEN_OBJECT) {
          if (batchStart < 0) batchStart = at - 1;
          depth = 1;
          first = false;
        } else if (!expectItem && byte === COMMA) {
          expectItem = true;
          if (batchEnd - batchStart >= batchBytes) yield batch(bytes);
        } else if (byte === CLOSE_LIST && (first || !expectItem)) closed = true;
        else throw new NotStreamable();
        if (closed) break;
      }
    }
    if (!closed && !(await body.more(bytes.length))) throw new NotStreamable();
  }
  if (batchStart >= 0) yield batch(body.bytes);
  // The list must end the body's object: `]`, `}`, and nothing after them but white space.
  const bytes = await body.whole();
  at = skipSpace(bytes, at);
  if (bytes[at] !== CLOSE_OBJECT || skipSpace(bytes, at + 1) !== bytes.length) throw new NotStreamable();
}

/**
 * Most bodies come from JSON.stringify: items end in `},{`. A batch from `at` to the first such end past
 * `batchBytes` (looking no further than as far again) is one JSON.parse takes only if the cut is between
 * items, since text cut inside a string or a nested list does not parse. Undefined sends the scan above
 * over these items instead.
 */
function quickBatch(
  bytes: Uint8Array,
  at: number,
  batchBytes: number,
  decoder: TextDecoder,
): { items: unknown[]; next: number } | undefined {
  const until = Math.min(bytes.length - 2, at + 2 * batchBytes);
  for (
    let close = bytes.indexOf(CLOSE_OBJECT, at + batchBytes);
    close >= 0 && close < until;
    close = bytes.indexOf(CLOSE_OBJECT, close + 1)
  ) {
    if (bytes[close + 1] !== COMMA || bytes[close + 2] !== OPEN_OBJECT) continue;
    const items = parseItems(bytes.subarray(at, close + 1), decoder);
    return items && { items, next: close + 2 };
  }
  return undefined;
}

/**
 * Items as JSON.parse reads them in the whole text, and as the router would take them, or undefined when
 * the text is not JSON; NotStreamable when readBody would read the body otherwise or refuse its text.
 */
function parseItems(bytes: Uint8Array, decoder: TextDecoder): unknown[] | undefined {
  const text = decoder.decode(bytes);
  if (LOSSLESS_NUMBER.test(text)) throw new NotStreamable();
  let items: unknown[];
  try {
    items = JSON.parse(`[${text}]`) as unknown[];
  } catch {
    return undefined;
  }
  // NUL and lone surrogates only get into JSON text as \u escapes.
  if (text.includes('\\u') && findUnsafeInput(items)) throw new NotStreamable();
  return items;
}
