import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ArrivingBody } from '../src/http/body.js';
import { NotStreamable, streamJsonList } from '../src/http/json-list.js';

// A JSON body's last list read as it arrives must give what JSON.parse gives for the whole text, however
// the bytes are cut into chunks; anything else must throw NotStreamable, never a wrong answer.

/** A request whose body arrives in chunks of these sizes (the last chunk takes the rest). */
function arriving(text: string, sizes: number[] = []): ArrivingBody {
  const bytes = new TextEncoder().encode(text);
  const chunks: Uint8Array[] = [];
  let at = 0;
  for (const size of sizes) {
    if (at >= bytes.length) break;
    chunks.push(bytes.subarray(at, at + size));
    at += size;
  }
  if (at < bytes.length) chunks.push(bytes.subarray(at));
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks.shift();
      if (chunk) controller.enqueue(chunk);
      else controller.close();
    },
  });
  const request = new Request('http://localhost/', {
    method: 'POST',
    body,
    duplex: 'half',
    headers: { 'content-length': String(bytes.length) },
  } as RequestInit);
  return new ArrivingBody(request, 1 << 20);
}

async function read(text: string, sizes?: number[], batchBytes = 64) {
  const { head, items } = await streamJsonList(arriving(text, sizes), 'rows', batchBytes);
  const batches: unknown[][] = [];
  for await (const batch of items) batches.push(batch);
  return { head, rows: batches.flat(), batches };
}

const notStreamable = (text: string) => expect(read(text)).rejects.toBeInstanceOf(NotStreamable);

describe('streamJsonList', () => {
  it('reads the fields before the list, then its items in batches', async () => {
    const rows = Array.from({ length: 20 }, (_, i) => ({ name: `row ${i}`, n: i }));
    const { head, rows: read_, batches } = await read(JSON.stringify({ name: 'g', tags: ['a', { b: [1] }], rows }));
    expect(head).toEqual({ name: 'g', tags: ['a', { b: [1] }] });
    expect(read_).toEqual(rows);
    expect(batches.length).toBeGreaterThan(3);
  });

  it('reads any text, spacing and chunking as JSON.parse reads the whole', async () => {
    const text = fc.oneof(
      fc.string(),
      fc.string({ unit: 'grapheme' }),
      fc.constantFrom('\\', '"', '\\"', '}', ']', '{"a":', '},{', '"},{"', '\\u0041', 'é😀'),
    );
    const value = fc.oneof(text, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
    const row = fc.dictionary(text, value, { maxKeys: 5 });
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(
          fc.string().filter((k) => k !== 'rows'),
          value,
          { maxKeys: 3 },
        ),
        fc.array(row, { minLength: 1, maxLength: 30 }),
        fc.constantFrom(undefined, 1, '\t', ' \r\n'),
        fc.array(fc.integer({ min: 1, max: 9 }), { maxLength: 400 }),
        fc.integer({ min: 1, max: 200 }),
        async (head, rows, space, sizes, batchBytes) => {
          const body = JSON.stringify({ ...head, rows }, null, space);
          if (/\d{16}/.test(body) || body.includes('\\u0000') || /\\ud[89a-f]/i.test(body)) return;
          const whole = JSON.parse(body) as { rows: unknown[] };
          const result = await read(body, sizes, batchBytes);
          expect(result.rows).toEqual(whole.rows);
          expect({ ...result.head, rows: whole.rows }).toEqual(whole);
        },
      ),
      { numRuns: 300, seed: 18 },
    );
  });

  it('reads escapes cut between chunks, a byte at a time', async () => {
    const text = JSON.stringify({ name: 'a\\"}', rows: [{ 'k\\': '\\', q: '"\\"}]', u: 'é😀\u0001' }, { z: '\\\\' }] });
    expect(await read(text, Array(text.length).fill(1), 1)).toMatchObject({ head: { name: 'a\\"}' }, rows: JSON.parse(text).rows });
  });

  it('reads items whose text holds what separates items', async () => {
    const rows = Array.from({ length: 50 }, (_, i) => ({ a: `${i}"},{"b":[{"c":1},{"d":2}]},{` }));
    const text = JSON.stringify({ rows });
    for (const batchBytes of [1, 10, 100]) expect((await read(text, [], batchBytes)).rows).toEqual(rows);
  });

  it('reads an empty list as no items', async () => {
    expect((await read('{"a":1,"rows":[]}')).rows).toEqual([]);
  });

  it('leaves to the whole body what it cannot read exactly', async () => {
    const cases = [
      '[{"rows":[]}]',
      '\ufeff{"rows":[{"a":1}]}',
      '{"rows":[{"a":1}],"b":2}',
      '{"rows":[{"a":1}]}x',
      '{"rows":[{"a":1},]}',
      '{"rows":[{"a":1} {"b":2}]}',
      '{"rows":[{"a":1}',
      '{"rows":[1,2]}',
      '{"rows":{"a":1}}',
      '{"a":1}',
      '{"a":1,,"rows":[]}',
      '{"ro\\u0077s":[],"rows":[{"a":1}]}',
      '{"a":12345678901234567,"rows":[{"a":1}]}',
      '{"rows":[{"a":12345678901234567}]}',
      '{"rows":[{"a":"\\u0000"}]}',
      '{"rows":[{"\\ud800":1}]}',
      '{"rows":[{"a":tru}]}',
      `{"rows":[{"a":${'['.repeat(30)}${']'.repeat(30)}}]}`,
      `{"a":${'['.repeat(32)}${']'.repeat(32)},"rows":[]}`,
    ];
    for (const text of cases) await notStreamable(text);
    // Fields before the list that go on arriving past 64 KB.
    await expect(read(`{"a":"${'x'.repeat(70_000)}","rows":[]}`, Array(100).fill(1024))).rejects.toBeInstanceOf(NotStreamable);
  });

  it('gives up on rows sent before other fields as soon as the body has all arrived', async () => {
    const rows = JSON.stringify(Array.from({ length: 500 }, (_, i) => ({ note: `"b": ${i} ]}` })));
    for (const last of ['"b":[1,{"c":"]"}]', '"b":"x\\"', '"b":12', '"b" : null ', '"b":{"rows":[]}']) {
      const body = arriving(`{"a":1,"rows":${rows},${last}}`);
      await body.whole();
      const { items } = await streamJsonList(body, 'rows', 64);
      // Not a single batch of the rows.
      await expect(items.next()).rejects.toBeInstanceOf(NotStreamable);
    }
  });

  it('takes nesting up to the limit', async () => {
    const deep = `{"rows":[{"a":${'['.repeat(29)}${']'.repeat(29)}}]}`;
    expect((await read(deep)).rows).toEqual(JSON.parse(deep).rows);
  });
});
