import type { z } from 'zod';
import type { JsonText } from '../http/json-text.js';
import type { RateLimitBucket } from '../ops/rate-limits.js';
import type { ServiceContext } from '../services/context.js';

// A v1 endpoint is declared once, as data: the router serves it and the OpenAPI document is printed
// from the same declaration, so the two cannot disagree.

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
}

export interface RouteDefinition<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
> {
  method: Method;
  /** OpenAPI-style path below /api/v1, with a trailing slash: `/agents/{id}/`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  params?: P;
  query?: Q;
  body?: B;
  /** A realistic body, shown (and sent by "Try it out") in the API docs; a test holds it to `body`. */
  example?: z.input<B>;
  /** Takes the larger import body limit (whole files) instead of the ordinary one. */
  largeBody?: boolean;
  /**
   * A JSON body whose last field is the list `field` goes to `handler` as it arrives: the body's other
   * fields (the list as `[]`) as `body`, the list's items in batches (see http/json-list.ts). The handler
   * must leave nothing behind when it throws. A body of another shape, a refusal (ValidationError) or an
   * answer of undefined sends the whole body to the route's own handler instead, which decides the answer.
   */
  streamList?: {
    field: string;
    batchBytes: number;
    handler: (
      input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>,
      items: AsyncIterable<unknown[]>,
      ctx: ServiceContext,
    ) => Promise<(R extends z.ZodType ? z.input<R> : void) | undefined>;
  };
  /**
   * `?format=csv` answers every row (the list's paging does not apply) as a CSV download with the v1
   * field names as its header, streamed batch by batch (see csv.ts).
   */
  csv?: {
    filename: string;
    columns: readonly string[];
    rows: (input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>, ctx: ServiceContext) => AsyncIterable<Record<string, unknown>[]>;
  };
  /** A tighter per-user budget this endpoint also spends, besides the general one. */
  rateLimit?: RateLimitBucket;
  /**
   * How the body's fields are named on the wire: v1 mostly uses snake_case, the services' own names;
   * `camel` endpoints (`groupName`) pass their body through snakeKeys and name field errors back.
   */
  fieldCase?: 'snake' | 'camel';
  /** Success status and the v1 shape it returns (none for 204). */
  status: number;
  response?: R;
  /**
   * Refusals this endpoint documents besides the ones every endpoint has (400, 401, 404, ...); with a
   * `body` where the refusal says more than the common `{ detail, reason }`.
   */
  errors?: Record<number, string | { description: string; body: z.ZodType }>;
  handler: (
    input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>,
    ctx: ServiceContext,
  ) => Promise<R extends z.ZodType ? z.input<R> | JsonText<z.input<R>> : void>;
}

/** Declares a route; the generic parameters let the handler's input and result be checked. */
export function defineRoute<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType>(
  route: RouteDefinition<P, Q, B, R>,
): RouteDefinition {
  return route as unknown as RouteDefinition;
}
