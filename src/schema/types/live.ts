import { getCampaign } from '../../services/campaigns/campaigns.js';
import { getCallAttempt } from '../../services/results/calls.js';
import { watchCallAttempts, watchCampaign } from '../../services/live.js';
import { builder } from '../builder.js';

// Live updates over Server-Sent Events (graphql-yoga's, which graphql-sse clients in "distinct
// connections" mode speak). The source streams carry ids; each event is read fresh for the subscriber.

builder.subscriptionFields((t) => ({
  campaignUpdated: t.prismaField({
    type: 'Campaign',
    description:
      'The campaign at once, then again whenever its status or progress changes (dispatch, pause, resume, cancel, ' +
      'completion, a call placed or finished), at most every 250 ms. An unknown or another user’s campaign is NOT_FOUND.',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    subscribe: (_root, args, ctx) => watchCampaign(ctx.service, args.id),
    resolve: (query, _changed, args, ctx) => getCampaign(ctx.service, args.id, query),
  }),
  callAttemptUpdated: t.prismaField({
    type: 'CallAttempt',
    description:
      'Each call attempt of the campaign when it is created and when it changes (placed, finished), in its latest ' +
      'state: one that changes twice in quick succession may be sent once. An unknown or another user’s campaign is NOT_FOUND.',
    authScopes: { authenticated: true },
    args: { campaignId: t.arg({ type: 'UUID', required: true }) },
    subscribe: (_root, args, ctx) => watchCallAttempts(ctx.service, args.campaignId),
    resolve: (query, attemptId: string, _args, ctx) => getCallAttempt(ctx.service, attemptId, query),
  }),
}));
