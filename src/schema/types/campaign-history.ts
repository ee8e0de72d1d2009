import { camelCase } from '../../key-case.js';
import { getCampaignChange } from '../../services/campaigns/history.js';
import { watchCampaignChanges } from '../../services/live.js';
import { builder } from '../builder.js';

// A campaign's history: every change of its settings or status, with who made it, newest first; and
// each new entry live.

const CampaignAction = builder.enumType('CampaignAction', {
  description: 'What a change did: dispatched and resumed start calling; paused may be the user or the dialer (see the actor).',
  values: ['created', 'edited', 'scheduled', 'dispatched', 'paused', 'resumed', 'cancelled', 'completed'] as const,
});

const ActorKind = builder.enumType('CampaignActorKind', {
  description: 'user: a token’s user; api_key: an API key; system: the service itself (the dialer, the scheduler).',
  values: ['user', 'api_key', 'system'] as const,
});

interface Actor {
  kind: 'user' | 'api_key' | 'system';
  id: string | null;
}

/** `user:<id>`, `api_key:<id>` or `system`, as the history's trigger stores it. */
function actorOf(stored: string): Actor {
  const [kind, id] = stored.split(':') as [string, string | undefined];
  return kind === 'user' || kind === 'api_key' ? { kind, id: id ?? null } : { kind: 'system', id: null };
}

const CampaignActor = builder.objectRef<Actor>('CampaignActor').implement({
  fields: (t) => ({
    kind: t.field({ type: ActorKind, resolve: (a) => a.kind }),
    id: t.exposeString('id', { nullable: true, description: 'The user’s or API key’s id; null for the system.' }),
  }),
});

interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}

const FieldChangeType = builder.objectRef<FieldChange>('CampaignFieldChange').implement({
  fields: (t) => ({
    field: t.exposeString('field', { description: 'The field’s GraphQL name (e.g. concurrentCalls).' }),
    from: t.field({ type: 'JSON', nullable: true, resolve: (c) => c.from ?? null }),
    to: t.field({ type: 'JSON', nullable: true, resolve: (c) => c.to ?? null }),
  }),
});

builder.prismaObject('CampaignChange', {
  description: 'One change of a campaign: when, who, what, and each field from what to what.',
  select: { id: true },
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    at: t.expose('createdAt', { type: 'DateTime' }),
    action: t.field({ type: CampaignAction, select: { action: true }, resolve: (c) => c.action as (typeof CampaignAction)['$inferType'] }),
    actor: t.field({ type: CampaignActor, select: { actor: true }, resolve: (c) => actorOf(c.actor) }),
    changes: t.field({
      type: [FieldChangeType],
      select: { changes: true },
      resolve: (c) =>
        Object.entries(c.changes as Record<string, { from: unknown; to: unknown }>).map(([field, change]) => ({
          field: camelCase(field),
          from: change.from,
          to: change.to,
        })),
    }),
  }),
});

builder.prismaObjectFields('Campaign', (t) => ({
  history: t.relatedConnection('changes', {
    cursor: 'id',
    // The id after seq makes the order unique, as a cursor page needs to be cut in SQL (seq alone is not declared unique).
    query: { orderBy: [{ seq: 'desc' }, { id: 'desc' }] },
    description: 'Every change of the campaign (edits, dispatch, pauses, resumes, cancel, completion), newest first.',
  }),
}));

builder.subscriptionFields((t) => ({
  campaignChanged: t.prismaField({
    type: 'CampaignChange',
    description:
      'Each new entry of the campaign’s history as it is written, oldest first. An unknown or another user’s campaign is NOT_FOUND.',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    subscribe: (_root, args, ctx) => watchCampaignChanges(ctx.service, args.id),
    resolve: (query, changeId: string, _args, ctx) => getCampaignChange(ctx.service, changeId, query),
  }),
}));
