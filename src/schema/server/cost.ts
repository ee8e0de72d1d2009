import {
  getArgumentValues,
  getNamedType,
  getNullableType,
  getOperationAST,
  GraphQLError,
  isListType,
  isObjectType,
  Kind,
  type FragmentDefinitionNode,
  type GraphQLNamedType,
  type GraphQLSchema,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { operationVariables } from './variables.js';

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

/**
 * The values the operation's answer could hold, counted until they pass MAX_COST (`whole` says whether
 * every selection was counted), or null when the ordinary validation or execution will refuse it anyway.
 */
export function operationCost(
  schema: GraphQLSchema,
  document: Parameters<typeof getOperationAST>[0],
  operationName: string | null | undefined,
  variables: Record<string, unknown>,
): { values: number; whole: boolean } | null {
  const operation = getOperationAST(document, operationName);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return null;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);

  // A fragment costs the same wherever it is spread, so each is counted once: counted path by path,
  // three levels of 300 spreads were 27 million paths. One being counted counts 0 where it recurs,
  // which validation refuses anyway.
  const fragmentCosts = new Map<string, number>();
  const fragmentCost = (fragment: FragmentDefinitionNode): number => {
    const name = fragment.name.value;
    let found = fragmentCosts.get(name);
    if (found === undefined) {
      fragmentCosts.set(name, 0);
      const condition = schema.getType(fragment.typeCondition.name.value);
      found = condition ? cost(condition, fragment.selectionSet) : 0;
      fragmentCosts.set(name, found);
    }
    return found;
  };
  let whole = true;
  const selectionCost = (type: GraphQLNamedType, selection: SelectionNode): number => {
    if (selection.kind === Kind.INLINE_FRAGMENT) {
      const condition = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : type;
      return condition ? cost(condition, selection.selectionSet) : 0;
    }
    if (selection.kind === Kind.FRAGMENT_SPREAD) {
      const fragment = fragments.get(selection.name.value);
      return fragment ? fragmentCost(fragment) : 0;
    }
    const field = isObjectType(type) ? type.getFields()[selection.name.value] : undefined;
    if (!field || !selection.selectionSet) return 1;
    const page = pageOf(getArgumentValues(field, selection, variables), isListType(getNullableType(field.type)));
    return 1 + page * cost(getNamedType(field.type), selection.selectionSet);
  };
  // Once past the limit the verdict is known and the rest is not counted: a partial count only grows when
  // a page multiplies it, and a page of 0 rows makes it 0, as it would the whole count.
  const cost = (type: GraphQLNamedType, set: SelectionSetNode): number => {
    let total = 0;
    for (const [i, selection] of set.selections.entries()) {
      total += selectionCost(type, selection);
      if (total > MAX_COST) {
        if (i < set.selections.length - 1) whole = false;
        return total;
      }
    }
    return total;
  };
  try {
    const values = cost(root, operation.selectionSet);
    return { values, whole };
  } catch {
    // An argument execution refuses: it answers that error itself.
    return null;
  }
}

/** Refuses, before anything runs, an operation whose answer could hold more than MAX_COST values. */
export const costLimit: Plugin = {
  onExecute({ args, setResultAndStopExecution }) {
    // Variables that do not fit their types are refused without being counted (variables.ts).
    const { coerced } = operationVariables(args);
    const found = coerced && operationCost(args.schema, args.document, args.operationName, coerced);
    if (!found || found.values <= MAX_COST) return;
    setResultAndStopExecution({
      errors: [
        new GraphQLError(
          `This operation could answer ${found.whole ? '' : 'at least '}${found.values} values, above the limit of ${MAX_COST}: ` +
            'ask for smaller pages (first, last, limit) or fewer fields, or split it into several operations.',
          // A request error, as the other limits' validation errors are: 400 to clients of the GraphQL over
          // HTTP media type, 200 to those that accept only application/json.
          { extensions: { code: 'QUERY_TOO_COSTLY', http: { spec: true, status: 400 } } },
        ),
      ],
    });
  },
};
