// Generated inputs are trees of plain values and two kinds of leaves that JSON.stringify cannot write:
// JSON text written out as it is (10,000 levels deep, numbers beyond 2^53, 1e400), and references to
// ids that exist in the database at the moment the request is sent.

/** JSON text inserted as it is. */
export class RawJson {
  constructor(readonly text: string) {}
}

export type IdKind = 'agent' | 'template' | 'group' | 'contact' | 'campaign' | 'callAttempt' | 'appointment' | 'creditTransaction' | 'user';

/** An id of `kind` owned by the caller, by the other user, or by anyone; resolved when the request is sent. */
export class IdRef {
  constructor(
    readonly kind: IdKind,
    readonly owner: 'self' | 'other',
    readonly pick: number,
  ) {}
}

/** A file where GraphQL expects one: a part of a multipart request, or a plain string in any other encoding. */
export class FilePart {
  constructor(readonly content: string) {}
}

export type Value = null | boolean | number | string | RawJson | IdRef | FilePart | Value[] | { [key: string]: Value };

/** Turns references into ids, leaving every other leaf as it is. */
export function resolveIds(value: Value, idOf: (ref: IdRef) => string): Value {
  if (value instanceof IdRef) return idOf(value);
  if (Array.isArray(value)) return value.map((item) => resolveIds(item, idOf));
  if (value !== null && typeof value === 'object' && !(value instanceof RawJson) && !(value instanceof FilePart)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolveIds(item, idOf)]));
  }
  return value;
}

/** JSON text of a resolved value; generated trees are shallow, their deep parts are RawJson. */
export function toJsonText(value: Value): string {
  if (value instanceof RawJson) return value.text;
  if (value instanceof FilePart) return JSON.stringify(value.content);
  if (value instanceof IdRef) throw new Error('unresolved id reference');
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)}:${toJsonText(item)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A value as a form field carries it: text as it is, anything else as JSON text. */
export const toFormText = (value: Value): string => (typeof value === 'string' ? value : toJsonText(value));
