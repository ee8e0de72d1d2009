import fc from 'fast-check';
import type { HttpRequest } from './http.js';
import type { IdRef } from './json-text.js';

// A generated request before it is sent: which endpoint it aims at, how it is encoded, who sends it,
// and how to write it once the ids it names are known.

export type Caller = 'alice' | 'bob' | 'admin' | 'anonymous' | 'forged';

export interface Plan {
  surface: 'v1' | 'graphql';
  /** `POST /api/v1/contacts/import/` or `Mutation.importContacts`. */
  endpoint: string;
  /** How the request is encoded: `json`, `multipart`, `multipart without boundary`, `GET`, ... */
  transport: string;
  caller: Caller;
  /** The request on the wire, with `idOf` resolving the ids it names; authorization is added by the runner. */
  build(idOf: (ref: IdRef) => string): HttpRequest;
}

/** Mostly the first customer, who owns half of the ids; sometimes the other, an admin, nobody or a forged token. */
export const caller: fc.Arbitrary<Caller> = fc.constantFrom<Caller>(
  'alice',
  'alice',
  'alice',
  'alice',
  'bob',
  'admin',
  'anonymous',
  'forged',
);

/** How a plan shows in a failure report: short, whatever the size of its body. */
export function describe(plan: Plan, request: HttpRequest): string {
  const body =
    typeof request.body === 'string'
      ? request.body
      : request.body instanceof FormData
        ? `FormData(${[...request.body.keys()].join(', ')})`
        : `${request.body?.byteLength ?? 0} bytes`;
  const shown = body.length > 300 ? `${body.slice(0, 300)}... (${body.length} characters)` : body;
  return `${plan.caller} ${request.method} ${request.path.slice(0, 300)} [${plan.transport}] ${JSON.stringify(request.headers['content-type'] ?? '')} ${shown}`;
}

/** Gives a plan a short string form, which fast-check shows for a counterexample. */
export function withDescription(plan: Plan): Plan {
  return Object.assign(plan, { [fc.toStringMethod]: () => `${plan.surface} ${plan.endpoint} [${plan.transport}] as ${plan.caller}` });
}
