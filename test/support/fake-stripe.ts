import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LocalFake, reply } from './local-fake.js';

// A local stand-in for Stripe's API, speaking its protocol for Checkout Sessions: POST
// /v1/checkout/sessions with a bearer secret key and a form body (nested parameters written as
// `line_items[0][price_data][unit_amount]`) answers 200 with a checkout.session object; a missing or bad
// key answers 401, a missing or bad parameter 400, each with Stripe's error body
// `{ "error": { "type", "code", "param", "message" } }`. Written from Stripe's API reference,
// independently of the code under test.

/** A Checkout Session as the fake holds it (the fields Stripe's object carries that matter here). */
export interface FakeSession {
  id: string;
  object: 'checkout.session';
  amount_subtotal: number;
  amount_total: number;
  cancel_url: string;
  client_reference_id: string | null;
  created: number;
  currency: string;
  customer: string | null;
  expires_at: number;
  invoice: string | null;
  livemode: false;
  metadata: Record<string, string>;
  mode: string;
  payment_intent: string | null;
  payment_status: 'unpaid' | 'paid';
  status: 'open' | 'complete';
  success_url: string;
  url: string | null;
}

/** A create-session request as Stripe received it. */
export interface CreateRequest {
  params: Record<string, string>;
  authorization: string | undefined;
  idempotencyKey: string | undefined;
}

const id = (prefix: string) => `${prefix}_test_${randomBytes(12).toString('hex')}`;

export class FakeStripe extends LocalFake {
  readonly requests: CreateRequest[] = [];
  readonly sessions = new Map<string, FakeSession>();
  /** Answers the next create requests with this status and error body instead (a Stripe outage, say). */
  failWith: { status: number; error: Record<string, unknown> } | undefined;

  constructor(private readonly secretKey: string) {
    super();
  }

  /** The session as Stripe sends it in `checkout.session.completed` once the payer has paid. */
  completed(sessionId: string): FakeSession {
    const session = this.sessions.get(sessionId);
    if (!session) throw new Error(`no session ${sessionId}`);
    Object.assign(session, { status: 'complete', payment_status: 'paid', payment_intent: id('pi'), customer: id('cus'), url: null });
    return { ...session };
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://stripe.local');
    if (req.method !== 'POST' || url.pathname !== '/v1/checkout/sessions') {
      return reply(res, 404, error('invalid_request_error', `Unrecognized request URL (${req.method}: ${url.pathname}).`));
    }
    const authorization = req.headers.authorization;
    if (authorization !== `Bearer ${this.secretKey}`) {
      return reply(res, 401, error('invalid_request_error', 'Invalid API Key provided: sk_****'));
    }
    if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) {
      return reply(res, 400, error('invalid_request_error', 'Invalid request: the body must be form-encoded.'));
    }
    const params = Object.fromEntries(new URLSearchParams(body));
    this.requests.push({ params, authorization, idempotencyKey: header(req, 'idempotency-key') });
    if (this.failWith) return reply(res, this.failWith.status, { error: this.failWith.error });

    for (const name of ['mode', 'success_url', 'line_items[0][price_data][currency]', 'line_items[0][quantity]']) {
      if (!params[name])
        return reply(res, 400, error('invalid_request_error', `Missing required param: ${name}.`, 'parameter_missing', name));
    }
    const unitAmount = Number(params['line_items[0][price_data][unit_amount]']);
    const quantity = Number(params['line_items[0][quantity]']);
    if (!Number.isInteger(unitAmount) || unitAmount < 50) {
      const param = 'line_items[0][price_data][unit_amount]';
      return reply(
        res,
        400,
        error('invalid_request_error', 'Invalid integer: the amount must be at least 50 cents.', 'parameter_invalid_integer', param),
      );
    }
    const metadata: Record<string, string> = {};
    for (const [name, value] of Object.entries(params)) {
      const key = /^metadata\[(.+)\]$/.exec(name)?.[1];
      if (key) metadata[key] = value;
    }
    const created = Math.floor(Date.now() / 1000);
    const sessionId = id('cs');
    const session: FakeSession = {
      id: sessionId,
      object: 'checkout.session',
      amount_subtotal: unitAmount * quantity,
      amount_total: unitAmount * quantity,
      cancel_url: params.cancel_url ?? '',
      client_reference_id: params.client_reference_id ?? null,
      created,
      currency: params['line_items[0][price_data][currency]']!,
      customer: null,
      // Stripe's default: a session can be paid for 24 hours.
      expires_at: created + 24 * 3600,
      invoice: null,
      livemode: false,
      metadata,
      mode: params.mode!,
      payment_intent: null,
      payment_status: 'unpaid',
      status: 'open',
      success_url: params.success_url!,
      url: `https://checkout.stripe.com/c/pay/${sessionId}`,
    };
    this.sessions.set(sessionId, session);
    reply(res, 200, session, { 'request-id': id('req') });
  }

  protected failure(failure: unknown) {
    return error('api_error', `The fake failed: ${(failure as Error).message}`);
  }
}

function error(type: string, message: string, code?: string, param?: string) {
  return { error: { type, message, ...(code ? { code } : {}), ...(param ? { param } : {}) } };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
