import { builder } from '../builder.js';

export const CampaignStatus = builder.enumType('CampaignStatus', {
  values: ['draft', 'scheduled', 'running', 'paused', 'completed', 'cancelled'] as const,
});

export const Campaign = builder.prismaObject('Campaign', {
  description: 'Ties one agent to one contact group; dispatching it places the calls.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    status: t.expose('status', { type: CampaignStatus }),
    pausedReason: t.exposeString('pausedReason', { nullable: true }),
    timezone: t.exposeString('timezone'),
    concurrentCalls: t.exposeInt('concurrentCalls'),
    startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true }),
    completedAt: t.expose('completedAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});
