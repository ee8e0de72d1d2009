import { getOperationAST, getVariableValues, GraphQLError, type ExecutionArgs } from 'graphql';
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

/** The operation's variables coerced to their types, or the first problems found; coerced once per operation run. */
export function operationVariables(args: ExecutionArgs): Coercion {
  let coercion = coercions.get(args);
  if (!coercion) {
    const definitions = getOperationAST(args.document, args.operationName)?.variableDefinitions ?? [];
    coercion = getVariableValues(args.schema, definitions, args.variableValues ?? {}, { maxErrors: MAX_VARIABLE_ERRORS });
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
