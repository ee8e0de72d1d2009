import { GraphQLError, GraphQLScalarType, type ValueNode } from 'graphql';
import { DateTimeResolver } from 'graphql-scalars';
import { INSTANT_RANGE_MESSAGE, isStorableInstant } from '../services/input-safety.js';

// graphql-scalars' DateTime, held to the instants every date input accepts: a year 0000 in a filter
// reached PostgreSQL, which refused it.

function storable(date: Date, node?: ValueNode): Date {
  if (!isStorableInstant(date)) throw new GraphQLError(INSTANT_RANGE_MESSAGE, { nodes: node, extensions: { code: 'BAD_USER_INPUT' } });
  return date;
}

export const DateTimeScalar = new GraphQLScalarType<Date, Date | string>({
  ...DateTimeResolver.toConfig(),
  parseValue: (value) => storable(DateTimeResolver.parseValue(value) as Date),
  parseLiteral: (node, variables) => storable(DateTimeResolver.parseLiteral(node, variables) as Date, node),
});
