import { getOperationAST, getVariableValues, GraphQLError, type DocumentNode, type ExecutionArgs, type GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';

// An operation's variables are coerced to their declared types once, before anything reads an argument:
// the cost limit and compiled reads read theirs through this coercion, and variables that do not fit
// are refused here, before either runs. graphql-js reports every problem it finds unless told to stop,
// and each message shows the whole value the problem is in, so 3,200 unknown fields in one input object
// cost seconds of CPU (10,000 never answered): only the first few problems are reported.

/** Problems with the variables reported before coercion stops (graphql-js adds one saying it stopped). */
export const MAX_VARIABLE_ERRORS = 5;

type Coercion = ReturnType<typeof getVariableValues>;

const coercions = new WeakMap<ExecutionArgs, Coercion>();

/** An operation's variables coerced to their declared types, or the first problems found. */
export function coerceVariables(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
): Coercion {
  const definitions = getOperationAST(document, operationName)?.variableDefinitions ?? [];
  return getVariableValues(schema, definitions, variables ?? {}, { maxErrors: MAX_VARIABLE_ERRORS });
}

/** The operation's variables coerced to their types, or the first problems found; coerced once per operation run. */
export function operationVariables(args: ExecutionArgs): Coercion {
  let coercion = coercions.get(args);
  if (!coercion) {
    coercion = coerceVariables(args.schema, args.document, args.operationName, args.variableValues);
    coercions.set(args, coercion);
  }
  return coercion;
}

const badUserInput = (error: GraphQLError) =>
  new GraphQLError(error.message, {
    nodes: error.nodes,
    originalError: error.originalError,
    extensions: { ...error.extensions, code: 'BAD_USER_INPUT', http: { status: 400 } },
  });

const refusal = (args: ExecutionArgs) => {
  const { errors } = operationVariables(args);
  return errors && { errors: errors.map(badUserInput) };
};

/** Refuses, before anything reads them, variables that do not fit their types (BAD_USER_INPUT). */
export const variableCoercion: Plugin = {
  onExecute({ args, setResultAndStopExecution }) {
    const refused = refusal(args);
    if (refused) setResultAndStopExecution(refused);
  },
  onSubscribe({ args, setResultAndStopExecution }) {
    const refused = refusal(args);
    if (refused) setResultAndStopExecution(refused);
  },
};
