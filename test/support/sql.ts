import { statement, type SqlSession, type Statement } from '../../src/db/sql.js';

// Ad hoc SQL in tests: the application declares its statements in stores; a test's own text becomes a
// named statement (`test.1`, `test.2`, ...) the first time it runs.

const declared = new Map<string, Statement<unknown>>();

export function testSql(session: SqlSession) {
  return {
    query<Row = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<Row[]> {
      let named = declared.get(text);
      if (!named) declared.set(text, (named = statement(`test.${declared.size + 1}`, text)));
      return session.run(named as Statement<Row>, values);
    },
  };
}
