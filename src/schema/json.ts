import { GraphQLError, GraphQLScalarType } from 'graphql';
import { JSONResolver } from 'graphql-scalars';
import { fieldPath, findUnsafeInput } from '../services/input-safety.js';

// graphql-scalars' JSON, with the input checks of src/services/input-safety.ts applied to values
// written inline in the document (`callInsights: { a: { a: ... } }`). Values sent as variables were
// checked with all the variables before coercion.

export const JsonScalar = new GraphQLScalarType<unknown, unknown>({
  ...JSONResolver.toConfig(),
  parseLiteral: (node, variables) => {
    const value = JSONResolver.parseLiteral(node, variables);
    const unsafe = findUnsafeInput(value);
    if (unsafe) {
      throw new GraphQLError(unsafe.message, {
        nodes: node,
        extensions: { code: 'BAD_USER_INPUT', fieldErrors: { [fieldPath(unsafe.path)]: [unsafe.message] } },
      });
    }
    return value;
  },
});
