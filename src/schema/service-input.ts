import {
  getNullableType,
  isInputObjectType,
  isListType,
  type GraphQLInputField,
  type GraphQLInputType,
  type GraphQLResolveInfo,
} from 'graphql';
import { NON_FIELD, ValidationError, type FieldErrors } from '../services/errors.js';
import { snakeCase } from '../key-case.js';

// The service layer reads inputs in one key style, the stored one (snake_case, as v1 and the JSON columns
// spell them); GraphQL's public names are camelCase. This is the one translation between the two, driven
// by the schema's own input types, so a resolver never renames a field by hand: only the fields of input
// objects are renamed, and JSON values pass as sent.

/** The service's name of an input field: its `serviceName` extension, else its name in snake_case. */
const serviceName = (field: GraphQLInputField) => (field.extensions?.serviceName as string | undefined) ?? snakeCase(field.name);

/** A value of an input type in the service's key style; null means "not given" and is left out. */
function translate(type: GraphQLInputType, value: unknown, keepNull: readonly string[] = []): unknown {
  const nullable = getNullableType(type);
  if (value === null || value === undefined) return value;
  if (isListType(nullable)) return (value as unknown[]).map((item) => translate(nullable.ofType, item));
  if (!isInputObjectType(nullable)) return value;
  const fields = nullable.getFields();
  const result: Record<string, unknown> = {};
  for (const [name, inner] of Object.entries(value as Record<string, unknown>)) {
    if (inner === null && !keepNull.includes(name)) continue;
    result[serviceName(fields[name]!)] = translate(fields[name]!.type, inner);
  }
  return result;
}

/**
 * A service field path under the input's GraphQL names (`schedule_config.max_attempts` ->
 * `scheduleConfig.maxAttempts`), renaming only the segments that name input fields: keys inside a JSON
 * value (a CSV row's columns) stay as they are.
 */
function graphqlPath(type: GraphQLInputType, path: string): string {
  let current: GraphQLInputType | undefined = type;
  return path
    .split('.')
    .map((segment) => {
      const nullable = current && getNullableType(current);
      if (nullable && isListType(nullable) && /^\d+$/.test(segment)) {
        current = nullable.ofType;
        return segment;
      }
      const field =
        nullable && isInputObjectType(nullable) ? Object.values(nullable.getFields()).find((f) => serviceName(f) === segment) : undefined;
      current = field?.type;
      return field?.name ?? segment;
    })
    .join('.');
}

function graphqlFieldErrors(type: GraphQLInputType, errors: FieldErrors): FieldErrors {
  const renamed: FieldErrors = {};
  for (const [path, messages] of Object.entries(errors)) renamed[path === NON_FIELD ? path : graphqlPath(type, path)] = messages;
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
    if (error instanceof ValidationError) throw new ValidationError(graphqlFieldErrors(arg.type, error.fieldErrors));
    throw error;
  }
}
