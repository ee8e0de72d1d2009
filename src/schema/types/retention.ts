import * as retention from '../../services/retention/pseudonymise.js';
import { builder } from '../builder.js';
import { withServiceInput } from '../service-input.js';

// How long a customer's calls keep the person's data; the records themselves are kept five years.

const CallDataRetention = builder.objectRef<retention.CallDataRetention>('CallDataRetention').implement({
  description:
    'How long your calls keep the personal data of the person called (the number dialed, summary, transcript, recording link, analysis). Past it, an hourly run pseudonymises them: the number becomes its keyed hash (still found by exportCallRecords(phoneNumber:)), the rest is removed; the call record (times, duration, status, outcome, cost, caller ID) stays its five years.',
  fields: (t) => ({
    days: t.exposeInt('days', {
      nullable: true,
      description: 'Days after a call is placed; null: kept with the record for its five years.',
    }),
  }),
});

const CallDataRetentionInput = builder.inputType('CallDataRetentionInput', {
  fields: (t) => ({
    days: t.int({ description: `1 to ${retention.MAX_CALL_DATA_RETENTION_DAYS} days; null: kept with the record for its five years.` }),
  }),
});

builder.queryFields((t) => ({
  callDataRetention: t.field({
    type: CallDataRetention,
    description: 'How long your calls keep the personal data of the person called.',
    authScopes: { authenticated: true },
    resolve: (_root, _args, ctx) => retention.callDataRetention(ctx.service),
  }),
}));

builder.mutationFields((t) => ({
  setCallDataRetention: t.field({
    type: CallDataRetention,
    description:
      'Sets how long your calls keep the personal data of the person called; calls already past it are pseudonymised by the next hourly run.',
    authScopes: { authenticated: true },
    args: { input: t.arg({ type: CallDataRetentionInput, required: true }) },
    resolve: (_root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, (input) => retention.setCallDataRetention(ctx.service, input), ['days']),
  }),
}));
