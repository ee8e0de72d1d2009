import { Prisma } from '../generated/prisma/client.js';

// The one catalogue of errors the service layer raises. src/http/errors.ts maps each to a v1 (DRF-style)
// response and src/schema/errors.ts to a GraphQL `extensions.code`; nothing else decides status codes.

export type ErrorCode =
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'BAD_USER_INPUT'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'RATE_LIMITED'
  | 'UNAVAILABLE';

/** Messages keyed by field path (`name`, `variables.company_name`); `non_field_errors` for the whole input. */
export type FieldErrors = Record<string, string[]>;

export const NON_FIELD = 'non_field_errors';

export abstract class AppError extends Error {
  abstract readonly code: ErrorCode;
}

const MESSAGES = {
  missing: 'Authentication credentials were not provided.',
  invalid: 'Given token not valid for any token type',
  expired: 'Token is expired',
} as const;

export class AuthenticationError extends AppError {
  readonly code = 'UNAUTHENTICATED';
  /** `missing`: no bearer credentials at all; `invalid`: a token that did not verify; `expired`: one past its `exp`. */
  constructor(readonly reason: 'missing' | 'invalid' | 'expired') {
    super(MESSAGES[reason]);
  }
}

export class ForbiddenError extends AppError {
  readonly code = 'FORBIDDEN';
  constructor(message = 'You do not have permission to perform this action.') {
    super(message);
  }
}

/** Also what another user's resource looks like: it does not exist for you. */
export class NotFoundError extends AppError {
  readonly code = 'NOT_FOUND';
  constructor(readonly resource = 'Resource') {
    super('Not found.');
  }
}

/** The row a lookup found; none (another user's, or no such id) is a NotFoundError naming `what`. */
export function found<T>(row: T | null | undefined, what: string): T {
  if (row === null || row === undefined) throw new NotFoundError(what);
  return row;
}

export class ValidationError extends AppError {
  readonly code = 'BAD_USER_INPUT';
  constructor(readonly fieldErrors: FieldErrors) {
    super(summarize(fieldErrors));
  }

  static field(path: string, message: string): ValidationError {
    return new ValidationError({ [path]: [message] });
  }
}

/**
 * Every reason a request is refused with a CONFLICT (409): the one list the services throw, both
 * surfaces document (`extensions.reason` on GraphQL, `reason` in v1 bodies) and the docs cite.
 */
export const CONFLICT_REASONS = {
  campaign_draft: 'The campaign is a draft and the change needs it started.',
  campaign_scheduled: 'The campaign is scheduled; the change needs another state.',
  campaign_running: 'The campaign is running; pause it first.',
  campaign_paused: 'The campaign is paused; the change needs another state.',
  campaign_completed: 'The campaign is completed; nothing about it can change.',
  campaign_cancelled: 'The campaign is cancelled; nothing about it can change.',
  campaign_changed: 'The campaign was edited while it was starting; try again.',
  agent_inactive: "The campaign's agent is archived.",
  agent_has_no_phone_number: "The campaign's agent has no phone number to call from.",
  agent_not_ready: "The campaign's agent is not provisioned at the voice provider yet, or its provisioning failed.",
  provisioning_not_failed: "The agent's provisioning has not failed; only a failed one is retried.",
  no_callable_contacts: 'No contact of the group is left to call.',
  registry_stale:
    "A national do-not-call registry's copy is too old for a solicitation campaign to call; an operator must import a fresh one.",
  ai_disclosure_missing: "The campaign calls people where an AI must say so first, and its provider-hosted agent's begin message does not.",
  insufficient_credits: 'The credit balance cannot pay for the calls.',
  contact_group_in_use: 'A campaign that may still dial uses the contact group.',
  contact_on_call: 'A call to the contact is in progress.',
  contact_erased: 'The contact was erased; nothing of it is left to change.',
  call_not_in_flight: 'The call is over; in-call tools act only while it is under way.',
  concurrent_change: 'Another request changed the same data at the same time; try again.',
  api_key_limit: 'The user holds as many active API keys as there may be; revoke one first.',
  idempotency_key_in_use: 'A request with the same Idempotency-Key is still running.',
  idempotency_key_other_credential: 'The Idempotency-Key was used by another credential; its answer is for that one only.',
  webhook_endpoint_limit: 'The user has as many webhook endpoints as there may be; delete one first.',
  webhook_endpoint_disabled: 'The webhook endpoint is disabled or deleted; enable it first.',
} as const;
export type ConflictReason = keyof typeof CONFLICT_REASONS;

export class ConflictError extends AppError {
  readonly code = 'CONFLICT';
  /**
   * `reason` is a stable machine word from CONFLICT_REASONS; the message is for people. `extra` holds
   * fields a v1 endpoint shows beside them (dispatch's `success: false`, `campaign_id`, ...).
   */
  constructor(
    message: string,
    readonly reason: ConflictReason,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** A list of reasons in prose, for descriptions: "a, b or c". */
export function reasonList(reasons: readonly string[]): string {
  return reasons.length < 2 ? reasons.join('') : `${reasons.slice(0, -1).join(', ')} or ${reasons.at(-1)}`;
}

export class PayloadTooLargeError extends AppError {
  readonly code = 'PAYLOAD_TOO_LARGE';
  constructor(readonly limitBytes: number) {
    super(`Request body is larger than the limit of ${limitBytes} bytes.`);
  }
}

export class UnsupportedMediaTypeError extends AppError {
  readonly code = 'UNSUPPORTED_MEDIA_TYPE';
  constructor(readonly mediaType: string) {
    super(`Unsupported media type "${mediaType}" in request.`);
  }
}

export class RateLimitedError extends AppError {
  readonly code = 'RATE_LIMITED';
  constructor(readonly retryAfterSeconds: number) {
    super(`Request was throttled. Expected available in ${retryAfterSeconds} seconds.`);
  }
}

/** A feature this server is not configured for, or an outside service it needs that failed: try later or elsewhere. */
export class UnavailableError extends AppError {
  readonly code = 'UNAVAILABLE';
}

/** PostgreSQL's SQLSTATE when an insert meets a row with the same unique key. */
export const UNIQUE_VIOLATION = '23505';

/** SQLSTATEs of plain SQL (node-postgres, PGlite): unique violation, serialization failure, deadlock. */
const CONFLICTING_STATES = new Set([UNIQUE_VIOLATION, '40001', '40P01']);

/**
 * What the database answers when two requests change the same rows at once and the service did not
 * decide the race itself: a key both inserted, a write conflict or deadlock (409, try again), or a row
 * the other request deleted first (404). The client's timing, never a 500; undefined for anything else.
 */
export function concurrentChangeError(error: unknown): AppError | undefined {
  if (error instanceof Prisma.PrismaClientKnownRequestError) {
    if (error.code === 'P2025') return new NotFoundError();
    if (error.code !== 'P2002' && error.code !== 'P2034') return undefined;
  } else if (!CONFLICTING_STATES.has(String((error as { code?: unknown } | null)?.code))) {
    return undefined;
  }
  return new ConflictError('Another request changed the same data at the same time; try again.', 'concurrent_change');
}

function summarize(fieldErrors: FieldErrors): string {
  const parts = Object.entries(fieldErrors).map(([field, messages]) =>
    field === NON_FIELD ? messages.join(' ') : `${field}: ${messages.join(' ')}`,
  );
  return `Invalid input. ${parts.join('; ')}`;
}
