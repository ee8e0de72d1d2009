import { context, createContextKey, SpanKind } from '@opentelemetry/api';
import { ATTR_DB_QUERY_TEXT, ATTR_DB_SYSTEM_NAME, DB_SYSTEM_NAME_VALUE_POSTGRESQL } from '@opentelemetry/semantic-conventions';
import { inSpan } from '../ops/tracing.js';

// One span per SQL statement sent, named by its statement name (sql.ts, prisma-names.ts) where it has
// one. A span carries the statement's text, whose values are parameters: never the values themselves.
// Callers check tracingOn() first.

const DATABASE = { [ATTR_DB_SYSTEM_NAME]: DB_SYSTEM_NAME_VALUE_POSTGRESQL, 'db.system': DB_SYSTEM_NAME_VALUE_POSTGRESQL };
const CLIENT = { kind: SpanKind.CLIENT };
const STATEMENT_NAME = createContextKey('callflow.statement_name');

/**
 * Sends a named statement in its span. A named Prisma call has no text here: the statements it sends
 * are traced by the driver adapter (prismaStatementSpan), under its name.
 */
export function statementSpan<T>(statement: { name: string; text: string }, send: () => Promise<T>): Promise<T> {
  if (!statement.text) return context.with(context.active().setValue(STATEMENT_NAME, statement.name), send);
  return inSpan(statement.name, { ...DATABASE, [ATTR_DB_QUERY_TEXT]: statement.text }, send, CLIENT);
}

/** Sends one of Prisma's statements in its span, named by the named call it belongs to, else `prisma` and its first word. */
export function prismaStatementSpan<T>(text: string, send: () => Promise<T>): Promise<T> {
  const name = (context.active().getValue(STATEMENT_NAME) as string | undefined) ?? `prisma ${text.split(' ', 1)[0]}`;
  return inSpan(name, { ...DATABASE, [ATTR_DB_QUERY_TEXT]: text }, send, CLIENT);
}
