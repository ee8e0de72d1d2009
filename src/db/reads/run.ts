import { generatedStatement, type SqlSession, type Statement } from '../sql.js';
import { compileRead } from './compile.js';
import type { ReadPlan } from './plan.js';

/** A read plan's statement with its values: what a later request of the same shape can run again as it is. */
export interface ReadStatement {
  readonly statement: Statement<{ data: string; missing: boolean }>;
  readonly values: readonly unknown[];
}

/** The one statement answering a plan. Throws Unsupported when the plan cannot be compiled. */
export function readStatement(plan: ReadPlan): ReadStatement {
  const { text, values } = compileRead(plan);
  return { statement: generatedStatement('graphql.read', text), values };
}

/**
 * The answer's `data` object of a read, as JSON text, from one statement; null when a root field asking
 * for one row found none. Throws Unsupported when the plan cannot be compiled.
 */
export async function runRead(sql: SqlSession, read: ReadPlan | ReadStatement): Promise<string | null> {
  const { statement, values } = 'statement' in read ? read : readStatement(read);
  const [row] = await sql.run(statement, values);
  return row!.missing ? null : row!.data;
}
