import fc from 'fast-check';
import { IdRef, RawJson, type IdKind, type Value } from './json-text.js';

// Values a client could send: well-shaped ones, so that requests get past validation and reach the
// service and the database, and hostile ones, so that every check on the way is tried.

const deepList = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const deepObject = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

/** Text PostgreSQL cannot store, or that often breaks code that handles text. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '\u0000',
    'a\u0000b',
    '\ud800',
    'x\udc00y',
    '\udbff',
    '\ud83d\ude00',
    '\ufeffBOM',
    '\u202eevil',
    'e\u0301',
    '\u2028\u2029',
    '\ufffd',
    "'; DROP TABLE users; --",
    '%00',
    '%ED%A0%80',
    '{{ name }}',
    '<script>alert(1)</script>',
    '',
    ' ',
    '\t\n',
    'null',
    'true',
    '1e999',
    '-0',
    '0x10',
    'NaN',
    '١٢٣',
    '１２３',
    '__proto__',
    'constructor',
    '../../etc/passwd',
  ),
  fc.constantFrom(256, 10_001, 100_000).map((length) => 'x'.repeat(length)),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
);

/** Numbers at and beyond the edges of every range the service uses, some as JSON text JavaScript cannot hold. */
export const edgeNumber: fc.Arbitrary<Value> = fc.oneof(
  fc.constantFrom(0, -1, 1, 1.5, -0.5, 2 ** 31 - 1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, -(2 ** 53), 1e21, 1001, 366, 10_081),
  fc
    .constantFrom(
      '9007199254740993',
      '9223372036854775807',
      '9223372036854775808',
      '-9223372036854775809',
      '1e400',
      '-1e400',
      '1E3',
      '1.0',
      '123456789012345678901234567890',
    )
    .map((text) => new RawJson(text)),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** ISO 8601 date-times inside and outside what PostgreSQL stores, and strings that are not date-times. */
export const dateText: fc.Arbitrary<string> = fc.oneof(
  fc
    .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
    .map((date) => date.toISOString()),
  fc.constantFrom(
    '0000-01-01T00:00:00Z',
    '0000-12-31T23:59:59.999Z',
    '0001-01-01T00:00:00+01:00',
    '0001-01-01T00:00:00Z',
    '9999-12-31T23:59:59.999Z',
    '9999-12-31T23:59:59-23:59',
    '+010000-01-01T00:00:00Z',
    '-000001-01-01T00:00:00Z',
    '2026-02-30T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-01-01',
    '2026-01-01T25:00:00Z',
    '1970-01-01T00:00:00Z',
    'tomorrow',
  ),
);

/** Nesting far beyond the limit, at the limit, and one past it. */
export const deepJson: fc.Arbitrary<RawJson> = fc
  .constantFrom(
    deepList(32),
    deepObject(31),
    deepList(33),
    deepObject(40),
    deepList(10_000),
    deepObject(10_000),
    `[${deepList(5_000)},12345678901234567]`,
  )
  .map((text) => new RawJson(text));

/** A list longer than PostgreSQL's 32,767 bind parameters, of one of `items` over and over. */
export const hugeList = (items: readonly Value[]): fc.Arbitrary<RawJson> =>
  fc.tuple(fc.constantFrom(...items), fc.constantFrom(32_767, 40_000)).map(([item, length]) => {
    const one = JSON.stringify(item);
    return new RawJson(`[${Array.from({ length }, () => one).join(',')}]`);
  });

/** Any JSON value, small, with hostile text among its keys and strings. */
export const anyJson: fc.Arbitrary<Value> = fc.letrec<{ value: Value }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    edgeNumber,
    fc.string({ maxLength: 20 }),
    hostileString,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 10 }), hostileString), tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** Something of any type at all: what a client sends when it gets a field wrong, or on purpose. */
export const hostileValue: fc.Arbitrary<Value> = fc.oneof(
  { arbitrary: hostileString, weight: 4 },
  { arbitrary: edgeNumber, weight: 2 },
  { arbitrary: dateText, weight: 1 },
  { arbitrary: deepJson, weight: 2 },
  { arbitrary: hugeList(['x', 1, null]), weight: 1 },
  { arbitrary: anyJson, weight: 2 },
  { arbitrary: fc.constantFrom<Value>(null, true, false, [], {}, ''), weight: 2 },
);

/** Mostly `valid`, sometimes anything. */
export const mostly = (valid: fc.Arbitrary<Value>): fc.Arbitrary<Value> =>
  fc.oneof({ arbitrary: valid, weight: 8 }, { arbitrary: hostileValue, weight: 1 });

const KINDS: [RegExp, IdKind][] = [
  [/template/i, 'template'],
  [/group/i, 'group'],
  [/attempt/i, 'callAttempt'],
  [/transaction/i, 'creditTransaction'],
  [/appointment/i, 'appointment'],
  [/campaign/i, 'campaign'],
  [/contact/i, 'contact'],
  [/agent/i, 'agent'],
  [/user/i, 'user'],
];

/** The kind of resource a name (`contact_group_id`, `deleteContactGroup`, `/agents/templates/`) is about. */
export function idKindOf(...names: string[]): IdKind | undefined {
  for (const name of names) {
    const found = KINDS.find(([pattern]) => pattern.test(name));
    if (found) return found[1];
  }
  return undefined;
}

const ALL_KINDS = KINDS.map(([, kind]) => kind);

/**
 * An id. Well-shaped: the caller's own of the kind named, mostly. Otherwise also the other user's, one of
 * another kind, a random one, or not an id at all.
 */
export const idValue = (kind: IdKind | undefined, hostile: boolean): fc.Arbitrary<Value> => {
  // The pool lists the newest (and live) first: those are the likeliest to be usable.
  const pick = fc.oneof({ arbitrary: fc.integer({ min: 0, max: 2 }), weight: 3 }, { arbitrary: fc.nat(), weight: 1 });
  const own = pick.map((index) => new IdRef(kind ?? 'campaign', 'self', index));
  if (!hostile) return own;
  return fc.oneof(
    { arbitrary: own, weight: 6 },
    { arbitrary: pick.map((index) => new IdRef(kind ?? 'campaign', 'other', index)), weight: 3 },
    {
      arbitrary: fc
        .tuple(fc.constantFrom(...ALL_KINDS), fc.constantFrom<'self' | 'other'>('self', 'other'), pick)
        .map(([k, owner, index]) => new IdRef(k, owner, index)),
      weight: 2,
    },
    { arbitrary: fc.uuid(), weight: 1 },
    {
      arbitrary: fc.constantFrom('0', 'not-a-uuid', '00000000-0000-0000-0000-000000000000', 'FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF', ''),
      weight: 1,
    },
  );
};

const validPhone = fc.integer({ min: 0, max: 9999 }).map((n) => `+1415555${String(n).padStart(4, '0')}`);

/** Phone numbers as people write them, some not numbers at all. */
const phoneText: fc.Arbitrary<string> = fc.oneof(
  validPhone,
  fc.integer({ min: 0, max: 9999 }).map((n) => `(415) 555-${String(n).padStart(4, '0')}`),
  fc.constantFrom('12', '+999', 'call me', '+44 20 7946 0958', '+14155550101'),
);

const futureDate = fc
  .date({ min: new Date('2030-01-01T00:00:00Z'), max: new Date('2040-01-01T00:00:00Z'), noInvalidDate: true })
  .map((date) => date.toISOString());

/** Rows of a contact import, with the columns a real file has. */
const contactRows = fc.array(
  fc.record(
    { Phone: phoneText, Name: fc.string({ maxLength: 12 }), Email: fc.constantFrom('a@example.com', 'nope', '') },
    { requiredKeys: ['Phone'] },
  ),
  {
    minLength: 1,
    maxLength: 4,
  },
);

/**
 * Well-shaped values for a field, guessed from its name, for the fields whose type alone says too
 * little (text, lists of anything); undefined for the others. With `hostile`, also near misses.
 */
export function valueFor(name: string, hostile: boolean): fc.Arbitrary<Value> | undefined {
  const pick = <T extends Value>(valid: fc.Arbitrary<T>, nearMisses: fc.Arbitrary<Value>) =>
    hostile ? fc.oneof(valid, nearMisses) : valid;
  if (/^(csvData|rows)$/.test(name)) return contactRows;
  // An agent's variables: what one of the seeded templates asks for.
  if (/^variables$/.test(name)) {
    return fc.constantFrom<Value>(
      { agent_name: 'Sam', company_name: 'Acme' },
      { agent_name: 'Sam', company_name: 'Acme', product_name: 'Cleaning' },
      { agent_name: 'Sam', business_name: 'Acme', callback_number: '+14155550100' },
      { agent_name: 'Sam', company_name: 'Acme', payment_url: 'https://example.com/pay' },
    );
  }
  if (/^(first|last|limit)$/.test(name)) return pick(fc.integer({ min: 1, max: 50 }), fc.constantFrom(0, -1, 501));
  if (/^offset$/.test(name)) return pick(fc.integer({ min: 0, max: 20 }), fc.constantFrom(-1, 2 ** 31 - 1));
  if (/^selectedHeaders$/.test(name)) return pick(fc.subarray(['Phone', 'Name', 'Email']), fc.constant(['Phone', 'Missing']));
  if (/^active_?days$/i.test(name))
    return pick(
      fc.subarray(['mon', 'tue', 'Wednesday', 'THU', 5, '6', 'sun'], { minLength: 1 }),
      fc.constantFrom([], ['someday'], [0], [8]),
    );
  if (/phone|number/i.test(name)) return pick(validPhone, phoneText);
  if (/timezone|zone/i.test(name))
    return pick(fc.constantFrom('UTC', 'America/New_York', 'Europe/Paris'), fc.constantFrom('Mars/Olympus', 'utc', '+05:00'));
  if (/country/i.test(name)) return pick(fc.constantFrom('US', 'GB', 'FR'), fc.constantFrom('XX', 'usa', 'us'));
  if (/(_at|At|^from|^to)$/.test(name)) return pick(futureDate, dateText);
  if (/status/i.test(name))
    return fc.constantFrom(
      'draft',
      'scheduled',
      'confirmed',
      'cancelled',
      'completed',
      'no_show',
      ...(hostile ? ['running', 'weird'] : []),
    );
  return undefined;
}

/** Text for a field with no better guess. */
export const plainText: fc.Arbitrary<Value> = fc.oneof(
  fc.string({ minLength: 1, maxLength: 30 }),
  fc.constantFrom('Spring recall', 'Leads', 'Phone', 'Name', 'api'),
);

/** A member of an object that is left out. */
const ABSENT = Symbol('absent');

/**
 * Objects of `shape` with the `required` members always and a few of the others: a request with every
 * optional field set at once is rarely valid, and real clients send few.
 */
export function objectOf(shape: Record<string, fc.Arbitrary<Value>>, required: string[]): fc.Arbitrary<Value> {
  const absentWeight = Math.max(1, Math.floor((Object.keys(shape).length - required.length) / 3));
  const members = Object.entries(shape).map(([key, arbitrary]) =>
    required.includes(key) ? arbitrary : fc.oneof({ arbitrary: fc.constant(ABSENT), weight: absentWeight }, { arbitrary, weight: 1 }),
  );
  return fc
    .tuple(...members)
    .map((values) => Object.fromEntries(Object.keys(shape).flatMap((key, i) => (values[i] === ABSENT ? [] : [[key, values[i] as Value]]))));
}
