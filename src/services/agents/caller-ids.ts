import { z } from 'zod';
import type { Prisma } from '../../generated/prisma/client.js';
import { intInRange } from '../calling-rules/schedule.js';
import type { ServiceContext } from '../context.js';
import { found, NotFoundError, ValidationError } from '../errors.js';
import { uuidv7 } from '../ids.js';
import { INVALID_PHONE_MESSAGE, toE164 } from '../phone.js';
import { defaultCountryOf } from '../users/store.js';
import { parseInput, uuid, type RawInput } from '../validation.js';
import * as store from './store.js';

// An agent's pool of caller IDs: the numbers its calls may go out from, each with its limits. Which one a
// call uses is the dialer's rule (dialer/caller-id.ts).

/** Limits of a number; null lifts one. */
export const callerIdLimits = z.object({
  max_calls_per_hour: intInRange(1, 100_000).nullable().optional().describe('Calls it may place in any hour; null: no limit.'),
  max_calls_per_day: intInRange(1, 1_000_000).nullable().optional().describe('Calls it may place in any 24 hours; null: no limit.'),
  cooldown_after_unanswered: intInRange(1, 1_000)
    .nullable()
    .optional()
    .describe(
      'After this many unanswered calls in a row (no answer, busy, screened, failed), it rests cooldown_minutes; its calls in flight count as unanswered until their results come, so it never has more in flight than would complete the run; null: never.',
    ),
  cooldown_minutes: intInRange(1, 10_080).optional(),
  rest_below_answer_rate: z
    .number()
    .min(0)
    .max(1)
    .nullable()
    .optional()
    .describe('Rested rest_hours when fewer than this share of its last rest_window_calls calls reached a person; null: never.'),
  rest_window_calls: intInRange(5, 10_000).optional(),
  rest_hours: intInRange(1, 720).optional(),
});

const addInput = callerIdLimits.extend({
  phone_number: z.string().trim().min(1).max(32),
  label: z.string().trim().max(64).default(''),
});

const COLUMNS = {
  max_calls_per_hour: 'maxCallsPerHour',
  max_calls_per_day: 'maxCallsPerDay',
  cooldown_after_unanswered: 'cooldownAfterUnanswered',
  cooldown_minutes: 'cooldownMinutes',
  rest_below_answer_rate: 'restBelowAnswerRate',
  rest_window_calls: 'restWindowCalls',
  rest_hours: 'restHours',
} as const;

function limitColumns(limits: z.output<typeof callerIdLimits>): Prisma.PhoneNumberUpdateManyMutationInput {
  const data: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(COLUMNS)) {
    const value = limits[key as keyof typeof COLUMNS];
    if (value !== undefined) data[column] = value;
  }
  return data;
}

type NumberQuery = Omit<Prisma.PhoneNumberFindFirstArgs, 'where'>;

/** Adds a number to one of the user's active agents' pools, with its limits. */
export async function addCallerId(ctx: ServiceContext, agentId: string, raw: RawInput<typeof addInput>, query: NumberQuery = {}) {
  const input = parseInput(addInput, raw);
  const agent = uuid.safeParse(agentId).success ? await store.findActiveAgent(ctx.db, ctx.user.id, agentId) : null;
  found(agent, 'Agent');
  const number = toE164(input.phone_number, await defaultCountryOf(ctx.db, ctx.user.id));
  if (!number) throw ValidationError.field('phone_number', INVALID_PHONE_MESSAGE);
  const id = await ctx.sql.transaction((tx) =>
    store.addPoolNumber(tx, { id: uuidv7(), user_id: ctx.user.id, agent_id: agentId, number, label: input.label }),
  );
  if (!id) throw ValidationError.field('phone_number', 'This number already belongs to an active agent.');
  await store.updateNumberLimits(ctx.db, ctx.user.id, id, limitColumns(input));
  return found(await store.findUserNumber(ctx.db, ctx.user.id, id, query), 'PhoneNumber');
}

/** Sets a number's limits; a rest in progress ends when `end_rest` is true. */
export async function setCallerIdLimits(
  ctx: ServiceContext,
  id: string,
  raw: RawInput<typeof callerIdLimits> & { end_rest?: boolean },
  query: NumberQuery = {},
) {
  const input = parseInput(callerIdLimits.extend({ end_rest: z.boolean().default(false) }), raw);
  const data = { ...limitColumns(input), ...(input.end_rest ? { restedUntil: null } : {}) };
  if (!uuid.safeParse(id).success || !(await store.updateNumberLimits(ctx.db, ctx.user.id, id, data)))
    throw new NotFoundError('PhoneNumber');
  return found(await store.findUserNumber(ctx.db, ctx.user.id, id, query), 'PhoneNumber');
}
