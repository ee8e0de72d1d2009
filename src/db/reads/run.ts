import { generatedStatement, type SqlSession } from '../sql.js';
import { compileRead } from './compile.js';
import type { ReadPlan } from './plan.js';

/**
 * The answer's `data` object of a read plan, as JSON text, from one statement; null when a root field
 * asking for one row found none. Throws Unsupported when the plan cannot be compiled.
 */
export async function runRead(sql: SqlSession, plan: ReadPlan): Promise<string | null> {
  const { text, values } = compileRead(plan);
  const [row] = await sql.run(generatedStatement<{ data: string; missing: boolean }>('graphql.read', text), values);
  return row!.missing ? null : row!.data;
}
