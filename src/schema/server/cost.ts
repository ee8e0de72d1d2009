import {
  getArgumentValues,
  getNamedType,
  getNullableType,
  getOperationAST,
  getVariableValues,
  GraphQLError,
  isListType,
  isObjectType,
  Kind,
  type FragmentDefinitionNode,
  type GraphQLNamedType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';

// What an operation may ask for, counted as the values its answer could hold: every selected field
// once for each row of the pages around it, a page being as large as its `first`, `last` (or a list's `limit`)
// (the default page when none is given; no more than the largest page a connection serves). Counted
// with the operation's variables, so a page size in a variable counts as much as one written in the
// document, which a count at validation time cannot see.

export const MAX_COST = 25_000;
const DEFAULT_PAGE = 20;
const MAX_PAGE = 100;
const MAX_LIMIT = 500;

/** The rows a field's answer may repeat its selection for: a connection's page, or a list's `limit`. */
function pageOf(args: Record<string, unknown>, isList: boolean): number {
  const size = [args.first, args.last].find((v): v is number => typeof v === 'number');
  if (size !== undefined) return Math.max(0, Math.min(size, MAX_PAGE));
  if (isList && typeof args.limit === 'number') return Math.max(0, Math.min(args.limit, MAX_LIMIT));
  return 'first' in args || 'last' in args ? DEFAULT_PAGE : 1;
}

/** The values the operation's answer could hold, or null when the ordinary validation will refuse it anyway. */
export function operationCost(
  schema: GraphQLSchema,
  document: Parameters<typeof getOperationAST>[0],
  operationName: string | null | undefined,
  rawVariables: Record<string, unknown> | null | undefined,
): number | null {
  const operation = getOperationAST(document, operationName);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return null;
  const { coerced } = getVariableValues(schema, operation.variableDefinitions ?? [], rawVariables ?? {});
  if (!coerced) return null;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);

  const cost = (type: GraphQLNamedType, set: SelectionSetNode, seen: Set<string>): number => {
    let total = 0;
    for (const selection of set.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : type;
        total += condition ? cost(condition, selection.selectionSet, seen) : 0;
      } else if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        const condition = fragment && schema.getType(fragment.typeCondition.name.value);
        if (fragment && condition && !seen.has(fragment.name.value)) {
          total += cost(condition, fragment.selectionSet, new Set([...seen, fragment.name.value]));
        }
      } else {
        total += 1;
        const field = isObjectType(type) ? type.getFields()[selection.name.value] : undefined;
        if (!field || !selection.selectionSet) continue;
        const page = pageOf(getArgumentValues(field, selection, coerced), isListType(getNullableType(field.type)));
        total += page * cost(getNamedType(field.type), selection.selectionSet, seen);
      }
    }
    return total;
  };
  try {
    return cost(root, operation.selectionSet, new Set());
  } catch {
    // An argument execution refuses (a bad variable): it answers that error itself.
    return null;
  }
}

/** Refuses, before anything runs, an operation whose answer could hold more than MAX_COST values. */
export const costLimit: Plugin = {
  onExecute({ args, setResultAndStopExecution }) {
    const found = operationCost(args.schema, args.document, args.operationName, args.variableValues);
    if (found === null || found <= MAX_COST) return;
    setResultAndStopExecution({
      errors: [
        new GraphQLError(
          `This operation could answer ${found} values, above the limit of ${MAX_COST}: ` +
            'ask for smaller pages (first, last, limit) or fewer fields, or split it into several operations.',
          { extensions: { code: 'QUERY_TOO_COSTLY' } },
        ),
      ],
    });
  },
};
