import { getOperationAST, type DocumentNode } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { graphqlOperationDuration, graphqlOperations } from '../../ops/metrics.js';

// Operation names come from clients, so only the first MAX_OPERATION_NAMES distinct ones become label
// values; later ones are counted as `(other)`. Parentheses cannot occur in a GraphQL name.
const MAX_OPERATION_NAMES = 200;
const seenNames = new Set<string>();

function nameLabel(name: string | undefined): string {
  if (!name) return '(anonymous)';
  if (seenNames.has(name)) return name;
  if (seenNames.size >= MAX_OPERATION_NAMES) return '(other)';
  seenNames.add(name);
  return name;
}

/** The labels an operation is counted and timed by. */
export function operationLabels(document: DocumentNode, operationName: string | null | undefined) {
  const operation = getOperationAST(document, operationName);
  return { operation_type: operation?.operation ?? 'unknown', operation_name: nameLabel(operation?.name?.value) };
}

/** Counts and times executed operations (parsed, valid and authenticated) by type and name. */
export const graphqlMetrics: Plugin = {
  onExecute({ args }) {
    const labels = operationLabels(args.document, args.operationName);
    const end = graphqlOperationDuration.startTimer(labels);
    return {
      onExecuteDone({ result }) {
        end();
        const failed = !isAsyncIterable(result) && Boolean(result.errors?.length);
        graphqlOperations.inc({ ...labels, result: failed ? 'error' : 'success' });
      },
    };
  },
};
