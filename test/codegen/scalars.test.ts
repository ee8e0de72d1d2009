import { readFileSync } from 'node:fs';
import { buildSchema, isScalarType, isSpecifiedScalarType } from 'graphql';
import { expect, it } from 'vitest';
import { scalars } from '../../codegen/client-config.js';

// Clients type custom scalars from codegen/client-config.ts: a scalar added to the schema without an
// entry there would reach them as `unknown` (or fail their generation, with strictScalars).

it('types every custom scalar of the published schema, and only those', () => {
  const schema = buildSchema(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'));
  const custom = Object.values(schema.getTypeMap())
    .filter((type) => isScalarType(type) && !isSpecifiedScalarType(type))
    .map((type) => type.name);
  expect(Object.keys(scalars).sort()).toEqual(custom.sort());
});
