import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { BigIntResolver } from 'graphql-scalars';

// graphql-scalars' BigInt, reading inputs as bigint itself: the library's parser logs a console warning
// unless BigInt.prototype is patched with toJSON, which this service does not do. Output is the
// library's: values within 2^53 - 1 (all money, by the ledger's ceiling) are plain JSON numbers.

function toBigInt(value: unknown): bigint {
  if (typeof value === 'bigint') return value;
  if ((typeof value === 'number' && Number.isInteger(value)) || (typeof value === 'string' && /^-?\d+$/.test(value))) {
    return BigInt(value);
  }
  throw new GraphQLError(`BigInt cannot represent value: ${JSON.stringify(value)}`);
}

export const BigIntScalar = new GraphQLScalarType<bigint, unknown>({
  ...BigIntResolver.toConfig(),
  parseValue: toBigInt,
  parseLiteral: (node) => {
    if (node.kind !== Kind.INT && node.kind !== Kind.STRING) {
      throw new GraphQLError('BigInt cannot represent a non-integer value.', { nodes: node });
    }
    return toBigInt(node.value);
  },
});
