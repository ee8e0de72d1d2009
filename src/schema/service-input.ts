import { getNamedType, getNullableType, isInputObjectType, isListType, type GraphQLInputType, type GraphQLResolveInfo } from 'graphql';
import { NON_FIELD, ValidationError, type FieldErrors } from '../services/errors.js';

// The service layer reads inputs in one key style, the stored one (snake_case, as v1 and the JSON columns
// spell them); GraphQL's public names are camelCase. This is the one translation between the two, driven
// by the schema's own input types, so a resolver never renames a field by hand: only the fields of input
// objects are renamed, and JSON values pass as sent.

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
const camelCase = (name: string) => name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());

/** A value of an input type in the service's key style; null means "not given" and is left out. */
function translate(type: GraphQLInputType, value: unknown, keepNull: readonly string[] = []): unknown {
  const nullable = getNullableType(type);
  if (value === null || value === undefined) return value;
  if (isListType(nullable)) return (value as unknown[]).map((item) => translate(nullable.ofType, item));
  const named = getNamedType(nullable);
  if (!isInputObjectType(named)) return value;
  const fields = named.getFields();
  const result: Record<string, unknown> = {};
  for (const [name, inner] of Object.entries(value as Record<string, unknown>)) {
    if (inner === null && !keepNull.includes(name)) continue;
    result[(fields[name]?.extensions?.serviceName as string | undefined) ?? snakeCase(name)] = translate(fields[name]!.type, inner);
  }
  return result;
}

/** Field errors under the GraphQL input's names: `schedule_config.max_attempts` -> `scheduleConfig.maxAttempts`. */
function graphqlFieldErrors(errors: FieldErrors): FieldErrors {
  const renamed: FieldErrors = {};
  for (const [path, messages] of Object.entries(errors)) {
    renamed[path === NON_FIELD ? path : path.split('.').map(camelCase).join('.')] = messages;
  }
  return renamed;
}

/**
 * Runs a service call with the resolver's `argName` argument in the service's key style, and names the
 * fields of its errors as the client sent them. `keepNull`: top-level fields where null means "clear".
 */
export async function withServiceInput<T>(
  info: GraphQLResolveInfo,
  argName: string,
  value: unknown,
  call: (input: Record<string, unknown>) => Promise<T>,
  keepNull: readonly string[] = [],
): Promise<T> {
  const arg = info.parentType.getFields()[info.fieldName]!.args.find((candidate) => candidate.name === argName)!;
  try {
    return await call(translate(arg.type, value, keepNull) as Record<string, unknown>);
  } catch (error) {
    if (error instanceof ValidationError) throw new ValidationError(graphqlFieldErrors(error.fieldErrors));
    throw error;
  }
}
