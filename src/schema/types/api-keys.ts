import * as apiKeys from '../../services/api-keys/api-keys.js';
import { builder } from '../builder.js';
import { withServiceInput } from '../service-input.js';

const ApiKeyScope = builder.enumType('ApiKeyScope', {
  description: 'What an API key may do.',
  values: {
    read: { description: 'Read only: queries and subscriptions, GET on v1. Anything else is FORBIDDEN.' },
    full: { description: 'Everything its user may do, except create or revoke API keys.' },
  },
});

export const ApiKey = builder.prismaObject('ApiKey', {
  description:
    'A named key for server-to-server calls, sent as `Authorization: Bearer <key>` on both surfaces and subscriptions. Its secret is shown once, when it is created.',
  select: { id: true },
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    prefix: t.string({
      description: "The key's visible start (`cfk_` and its public id), to tell keys apart; the secret follows it.",
      select: { publicId: true },
      resolve: (key) => apiKeys.keyPrefix(key.publicId),
    }),
    scope: t.expose('scope', { type: ApiKeyScope }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true, description: 'After this the key is refused; null: never.' }),
    lastUsedAt: t.expose('lastUsedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the key was last accepted, to the minute; null: never used.',
    }),
    revokedAt: t.expose('revokedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'Set once revoked; the key is refused from then on.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const CreateApiKeyInput = builder.inputType('CreateApiKeyInput', {
  fields: (t) => ({
    name: t.string({ required: true, description: 'Up to 100 characters.' }),
    scope: t.field({ type: ApiKeyScope, description: 'Default: full.' }),
    expiresAt: t.field({ type: 'DateTime', description: 'In the future; leave out for a key that does not expire.' }),
  }),
});

const CreatedApiKey = builder.objectRef<{ apiKey: { id: string }; secret: string }>('CreatedApiKey').implement({
  description: 'A new key and its secret, which is never shown again.',
  fields: (t) => ({
    apiKey: t.prismaField({
      type: 'ApiKey',
      resolve: (query, created, _args, ctx) => apiKeys.getApiKey(ctx.service, created.apiKey.id, query),
    }),
    secret: t.exposeString('secret', {
      description: 'The whole key, to send as `Authorization: Bearer <secret>`. Keep it: it is not stored.',
    }),
  }),
});

builder.queryFields((t) => ({
  apiKeys: t.prismaField({
    type: ['ApiKey'],
    description: "The caller's API keys, newest first, revoked and expired ones too. Secrets are never shown again.",
    authScopes: { authenticated: true },
    resolve: (query, _root, _args, ctx) => apiKeys.listApiKeys(ctx.service, query),
  }),
}));

builder.mutationFields((t) => ({
  createApiKey: t.field({
    type: CreatedApiKey,
    description: `Creates an API key and shows its secret this once. At most ${apiKeys.MAX_ACTIVE_KEYS} active keys (CONFLICT, reason api_key_limit); an API key cannot create keys (FORBIDDEN).`,
    authScopes: { authenticated: true },
    args: { input: t.arg({ type: CreateApiKeyInput, required: true }) },
    resolve: (_root, args, ctx, info) => withServiceInput(info, 'input', args.input, (input) => apiKeys.createApiKey(ctx.service, input)),
  }),
  revokeApiKey: t.prismaField({
    type: 'ApiKey',
    description: 'Revokes one of your keys: every instance refuses it from the next request on. Revoking again changes nothing.',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: async (query, _root, args, ctx) => {
      await apiKeys.revokeApiKey(ctx.service, args.id);
      return apiKeys.getApiKey(ctx.service, args.id, query);
    },
  }),
}));
