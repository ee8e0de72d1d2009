import SchemaBuilder from '@pothos/core';
import PrismaPlugin from '@pothos/plugin-prisma';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { UUIDResolver } from 'graphql-scalars';
import type PrismaTypes from '../generated/pothos-types.js';
import { getDatamodel } from '../generated/pothos-types.js';
import { ForbiddenError } from '../services/errors.js';
import { BigIntScalar } from './bigint.js';
import type { GraphQLContext } from './context.js';
import { DateTimeScalar } from './date-time.js';
import { FileScalar } from './file.js';
import { JsonScalar } from './json.js';

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  PrismaTypes: PrismaTypes;
  AuthScopes: { authenticated: boolean; admin: boolean };
  DefaultFieldNullability: false;
  Scalars: {
    UUID: { Input: string; Output: string };
    DateTime: { Input: Date; Output: Date | string };
    JSON: { Input: unknown; Output: unknown };
    File: { Input: File; Output: never };
    /** Money in cents: 64-bit, sent as a JSON number (the ledger keeps amounts within 2^53 - 1). */
    BigInt: { Input: bigint; Output: bigint };
  };
}>({
  plugins: [ScopeAuthPlugin, PrismaPlugin, RelayPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    authScopes: (ctx) => ({ authenticated: Boolean(ctx.user), admin: ctx.user?.isAdmin === true }),
    // A subscription is authorized once, before it starts listening, not again at each event.
    authorizeOnSubscribe: true,
    unauthorizedError: () => new ForbiddenError(),
  },
  prisma: {
    client: (ctx) => ctx.prisma,
    dmmf: getDatamodel(),
    filterConnectionTotalCount: true,
    onUnusedQuery: process.env.NODE_ENV === 'production' ? null : 'warn',
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    // Ids are plain UUIDs shared with v1, so there is no global `node` lookup to authorize.
    nodeQueryOptions: false,
    nodesQueryOptions: false,
  },
});

builder.addScalarType('UUID', UUIDResolver);
builder.addScalarType('DateTime', DateTimeScalar);
builder.addScalarType('JSON', JsonScalar);
builder.addScalarType('File', FileScalar);
builder.addScalarType('BigInt', BigIntScalar);

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});

/** The builder's type parameters, for helpers that make fields outside a type's own definition. */
export type SchemaTypes = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;
