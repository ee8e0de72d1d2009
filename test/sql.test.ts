import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import { copyText, generatedStatement, statement, type SqlTransaction } from '../src/db/sql.js';
import { openTestDatabase } from './support/database.js';
import { testSql } from './support/sql.js';

// The plain SQL beside Prisma gives the same JavaScript values on PostgreSQL and on PGlite, runs
// transactions all or nothing, and counts its statements with Prisma's.

let db: Database;
beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(() => db.close());

describe('plain SQL', () => {
  it('reads int8 as bigint, timestamps as Date and jsonb as values, whichever the database', async () => {
    const [row] = await testSql(db.sql).query<{ big: bigint; small: number; at: Date; doc: unknown; text: string | null }>(
      `SELECT 9007199254740993::int8 AS big, 7::int AS small, '2026-03-08T10:00:00Z'::timestamptz AS at,
              '{"a":[1,"x"]}'::jsonb AS doc, NULL::text AS text`,
    );
    expect(row).toEqual({ big: 9007199254740993n, small: 7, at: new Date('2026-03-08T10:00:00Z'), doc: { a: [1, 'x'] }, text: null });
    const [small] = await testSql(db.sql).query<{ big: bigint }>('SELECT 5::int8 AS big');
    expect(small!.big).toBe(5n);
  });

  it('commits a transaction whose work succeeds and leaves nothing of one that throws', async () => {
    const kept = randomUUID();
    const dropped = randomUUID();
    await db.sql.transaction((tx) => testSql(tx).query('INSERT INTO users (id) VALUES ($1::uuid)', [kept]));
    await expect(
      db.sql.transaction(async (tx) => {
        await testSql(tx).query('INSERT INTO users (id) VALUES ($1::uuid)', [dropped]);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    const rows = await testSql(db.sql).query<{ id: string }>('SELECT id FROM users WHERE id = ANY($1::uuid[])', [[kept, dropped]]);
    expect(rows.map((r) => r.id)).toEqual([kept]);
    // The pool is usable after a rollback.
    expect(await testSql(db.sql).query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('rolls back when a statement fails, and reports the database error', async () => {
    const id = randomUUID();
    const failure = db.sql.transaction(async (tx) => {
      await testSql(tx).query('INSERT INTO users (id) VALUES ($1::uuid)', [id]);
      await testSql(tx).query('INSERT INTO users (id) VALUES ($1::uuid)', [id]);
    });
    await expect(failure).rejects.toThrow(/duplicate key/);
    expect(await testSql(db.sql).query('SELECT id FROM users WHERE id = $1::uuid', [id])).toEqual([]);
  });

  it('loads rows with COPY inside a transaction, text escaped, and drops them with a rollback', async () => {
    await testSql(db.sql).query('CREATE TABLE copy_probe (id uuid PRIMARY KEY, note text)');
    const [kept, empty, dropped, cancelled] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const odd = 'tab\there, line\nbreak, back\\slash, \\N, carriage\rreturn';
    const copyInto = async (tx: SqlTransaction, ...lines: string[]) => {
      const copy = tx.copyInto('copy_probe', ['id', 'note']);
      for (const line of lines) await copy.write(line);
      await copy.end();
    };
    await db.sql.transaction((tx) => copyInto(tx, `${kept}\t${copyText(odd)}\n`, `${empty}\t${copyText(null)}\n`));
    await expect(
      db.sql.transaction(async (tx) => {
        await copyInto(tx, `${dropped}\tgone\n`);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    // The database refuses a row: the COPY fails, and the transaction with it.
    await expect(db.sql.transaction((tx) => copyInto(tx, `${dropped}\tnew\n`, `${kept}\tagain\n`))).rejects.toThrow(/duplicate key/);
    // The work fails while a COPY is still open: the COPY is cancelled and the transaction rolled back.
    await expect(
      db.sql.transaction(async (tx) => {
        await tx.copyInto('copy_probe', ['id', 'note']).write(`${cancelled}\thalf\n`);
        throw new Error('gave up half way');
      }),
    ).rejects.toThrow('gave up half way');
    const rows = await testSql(db.sql).query<{ id: string; note: string | null }>('SELECT id, note FROM copy_probe');
    expect(rows).toHaveLength(2);
    expect(rows).toEqual(
      expect.arrayContaining([
        { id: kept, note: odd },
        { id: empty, note: null },
      ]),
    );
  });

  it('counts its statements together with those Prisma sends', async () => {
    const before = db.statementCount();
    await testSql(db.sql).query('SELECT 1');
    await db.sql.transaction((tx) => testSql(tx).query('SELECT 2'));
    await db.prisma.user.count();
    // One, then BEGIN, the statement and COMMIT, then Prisma's one.
    expect(db.statementCount() - before).toBe(5);
  });

  it('refuses two texts under one statement name, so that a name always means one statement', () => {
    statement('test.one_name', 'SELECT 1');
    expect(() => statement('test.one_name', 'SELECT 1')).not.toThrow();
    expect(() => statement('test.one_name', 'SELECT 2')).toThrow('Two SQL statements are named test.one_name.');
  });

  it('prepares each generated text under a name of its own, and runs them all, under one metrics name', async () => {
    const first = generatedStatement<{ n: number }>('tests.generated', 'SELECT $1::int AS n');
    const second = generatedStatement<{ n: number }>('tests.generated', 'SELECT $1::int + 1 AS n');
    expect(generatedStatement('tests.generated', 'SELECT $1::int AS n')).toBe(first);
    expect(first.preparedAs).not.toBe(second.preparedAs);
    for (let i = 0; i < 3; i += 1) {
      expect(await db.sql.run(first, [i])).toEqual([{ n: i }]);
      expect(await db.sql.run(second, [i])).toEqual([{ n: i + 1 }]);
    }
  });

  it('names the statement in the error a failed one throws', async () => {
    const failing = statement('test.divide_by_zero', 'SELECT 1 / 0');
    await expect(db.sql.run(failing)).rejects.toMatchObject({ statement: 'test.divide_by_zero' });
    await expect(db.sql.transaction((tx) => tx.run(failing))).rejects.toMatchObject({ statement: 'test.divide_by_zero' });
  });
});
