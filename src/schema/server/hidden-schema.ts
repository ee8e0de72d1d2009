import { GraphQLError, print, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * With introspection off, the schema is not for clients to discover, yet graphql-js names it in its
 * messages: suggestions ("Did you mean the enum value ...?") and the types, fields and arguments it
 * checked a request against. This drops every suggestion from validation errors and from errors about
 * variables, and replaces each quoted name the client did not send with [hidden].
 */
export function hideSchemaNames(): Plugin {
  return {
    onValidate({ params }) {
      return ({ valid, result, setResult }) => {
        if (valid) return;
        const sent = sentNames(params.documentAST);
        setResult(result.map((error) => hidden(error, sent)));
      };
    },
    onExecute({ args }) {
      return { onExecuteDone: ({ result, setResult }) => setResult(withVariableErrorsHidden(result, args)) };
    },
    onSubscribe({ args }) {
      return { onSubscribeResult: ({ result, setResult }) => setResult(withVariableErrorsHidden(result, args)) };
    },
  };
}

const SUGGESTION = / ?Did you mean [^?]*\?/g;
const QUOTED = /"((?:[^"\\]|\\.)*)"/g;
const NAME = /[_A-Za-z][_0-9A-Za-z]*/g;
/** Every GraphQL server has these; naming them reveals nothing. */
const BUILT_IN_SCALARS = new Set(['String', 'Int', 'Float', 'Boolean', 'ID']);

function sentNames(document: DocumentNode, variables?: unknown): Set<string> {
  return new Set(`${print(document)} ${JSON.stringify(variables ?? {})}`.match(NAME));
}

function hidden(error: GraphQLError, sent: Set<string>): GraphQLError {
  const message = error.message
    .replace(SUGGESTION, '')
    .replace(QUOTED, (quoted, inner: string) =>
      (inner.match(NAME) ?? []).every((name) => sent.has(name) || BUILT_IN_SCALARS.has(name)) ? quoted : '[hidden]',
    );
  return new GraphQLError(message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: error.originalError,
    extensions: error.extensions,
  });
}

// Execution answers variables that do not fit their types with errors alone, each starting like this.
const VARIABLE_ERROR = 'Variable "$';

function withVariableErrorsHidden<R>(result: R, args: { document: DocumentNode; variableValues?: unknown }): R {
  const errors = (result as { errors?: readonly GraphQLError[] }).errors;
  if (!errors?.some((error) => error.message.startsWith(VARIABLE_ERROR))) return result;
  const sent = sentNames(args.document, args.variableValues);
  return { ...result, errors: errors.map((error) => (error.message.startsWith(VARIABLE_ERROR) ? hidden(error, sent) : error)) };
}
