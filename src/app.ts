import { createServer, type IncomingMessage, type ServerOptions, type ServerResponse } from 'node:http';
import type { HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import type { BodyLimits } from './config.js';
import type { RateLimiter } from './ops/rate-limits.js';
import type { Readiness } from './ops/readiness.js';
import { json } from './http/errors.js';
import type { RouteDefinition } from './rest/route.js';
import { createRestApp, V1_PREFIX } from './rest/router.js';
import type { Authenticator } from './services/auth.js';
import type { ServiceEnv } from './services/context.js';
import type { RetellWebhookSettings } from './services/voice/providers/retell/callbacks.js';
import type { TwilioWebhookSettings } from './services/voice/providers/twilio/callbacks.js';
import { accessLog } from './http/access-log.js';
import { compression } from './http/compression.js';
import { GRAPHIQL_ASSETS_PATH, graphiqlAsset } from './schema/server/graphiql.js';
import { declaredBodyLimit } from './http/body-limit.js';
import { idempotentRequests } from './http/idempotency.js';
import { v1Idempotency } from './rest/idempotency.js';
import { graphqlIdempotency } from './schema/server/idempotency.js';
import { cors, type CorsOrigins } from './http/cors.js';
import { markEventStream } from './http/drain.js';
import { adapterResponse } from './schema/server/node-adapter.js';
import { createGraphQLServer } from './schema/server/server.js';
import { KnownReads } from './schema/server/known-reads.js';
import { leanLane } from './schema/server/lean-lane.js';
import { v1LeanLane } from './rest/lean-lane.js';
import type { TrustedDocuments } from './schema/server/trusted-documents.js';
import { metricsEndpoint } from './http/metrics-endpoint.js';
import type { JobBacklog } from './jobs/queues.js';
import { readinessEndpoint } from './http/readiness-endpoint.js';
import { requestMetrics } from './http/request-metrics.js';
import { requestTracing } from './http/tracing.js';
import { tracingOn } from './ops/tracing.js';
import { requestScope, scopeOf } from './http/request-scope.js';
import { retellCallbacks } from './http/retell-callbacks.js';
import { retellTools } from './http/retell-tools.js';
import { stripeWebhook } from './http/stripe-webhook.js';
import { twilioStatusCallback, twilioVoiceCallback } from './http/twilio-callbacks.js';
import { VOICE_RUNTIME_CONFIG_PATH, voiceRuntimeConfig } from './http/voice-runtime.js';
import { consoleDocuments, consoleRoutes } from './http/console.js';
import { TWILIO_STATUS_PATH, TWILIO_VOICE_PATH } from './services/voice/providers/twilio/urls.js';

export interface AppDeps {
  env: ServiceEnv;
  authenticator: Authenticator;
  limits: BodyLimits;
  graphql: {
    introspection: boolean;
    graphiql: boolean;
    /** A token GraphiQL opens with (development's demo token). */
    graphiqlToken?: string | undefined;
    compiledReads: boolean;
    trustedDocuments?: TrustedDocuments | undefined;
  };
  /** Origins whose pages may call /graphql and /api/v1 from a browser. */
  corsOrigins: CorsOrigins;
  /** Serve the web console at /console/ (its operations join the trusted documents, when those are on). */
  console?: boolean;
  /** The v1 routes to serve; tests mount probe routes beside the real ones. */
  routes?: RouteDefinition[];
  stripeWebhookSecret?: string | undefined;
  /** Verifies and applies Retell's call webhooks; unset, /webhooks/retell answers 503. */
  retellWebhook?: RetellWebhookSettings | undefined;
  /** Verifies Twilio's requests, answers its voice URL and applies its status callbacks; unset, both answer 503. */
  twilioWebhook?: TwilioWebhookSettings | undefined;
  /** When set, /metrics answers only requests bearing this token. */
  metricsToken?: string | undefined;
  /** What /readyz checks. */
  readiness: Readiness;
  /** The job queues this process runs, whose sizes /metrics reports; none unless given. */
  jobBacklog?: JobBacklog | undefined;
  /** Per-user request budgets on both surfaces. */
  rateLimiter: RateLimiter;
}

export interface App {
  /** Every request through the full path (Hono). */
  fetch: Hono['fetch'];
  /** node:http's createServer, with the lean lanes (GraphQL's and v1's) in front of the full path: @hono/node-server's `serve` option. */
  createServer: typeof createServer;
}

type Listener = (incoming: IncomingMessage, outgoing: ServerResponse) => void;

/**
 * One HTTP application: GraphQL at /graphql, v1 REST under /api/v1/, payment and telephony webhooks under /webhooks/,
 * the voice agent's in-call tools under /voice/,
 * the web console at /console/, and the operations endpoints /healthz, /readyz and /metrics.
 */
export function createApp(deps: AppDeps): App {
  const knownReads = new KnownReads();
  const app = new Hono({ strict: true });
  // The console's operations are trusted documents too when it is served.
  const trustedDocuments =
    deps.graphql.trustedDocuments && deps.console
      ? new Map([...deps.graphql.trustedDocuments, ...consoleDocuments()])
      : deps.graphql.trustedDocuments;
  const yoga = createGraphQLServer({ ...deps, ...deps.graphql, trustedDocuments, knownReads });
  // Known compiled reads and v1 GETs skip the full path's layers; with tracing on, every request takes
  // the full path, whose spans they are.
  const lanes = (full: Listener): Listener => {
    if (tracingOn()) return full;
    const v1 = v1LeanLane(deps, full);
    if (!deps.graphql.compiledReads) return v1;
    return leanLane(
      {
        env: deps.env,
        authenticator: deps.authenticator,
        rateLimiter: deps.rateLimiter,
        corsOrigins: deps.corsOrigins,
        maxBodyBytes: deps.limits.maxImportBodyBytes,
        trustedDocuments,
        knownReads,
      },
      v1,
    );
  };
  const laneServer = ((options: ServerOptions, listener: Listener) => createServer(options, lanes(listener))) as typeof createServer;

  if (tracingOn()) app.use(requestTracing());
  app.use(requestScope(deps.env.log), accessLog(deps.env.log), requestMetrics(), compression());
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', readinessEndpoint(deps.readiness));
  app.get('/metrics', metricsEndpoint(deps.env, deps.metricsToken, deps.jobBacklog));
  // Both surfaces serve browsers; webhooks and operations endpoints are called by servers only.
  app.use('/graphql', cors(deps.corsOrigins));
  app.use(`${V1_PREFIX}/*`, cors(deps.corsOrigins));
  // GraphQL requests may carry a CSV upload (importContacts), so they get the import body limit.
  app.use('/graphql', declaredBodyLimit(deps.limits.maxImportBodyBytes));
  // After the body limits: a POST with an Idempotency-Key runs once per customer and key.
  app.use('/graphql', idempotentRequests(deps, graphqlIdempotency, deps.limits.maxImportBodyBytes));
  app.use(`${V1_PREFIX}/*`, idempotentRequests(deps, v1Idempotency, deps.limits.maxImportBodyBytes));
  app.get(`${GRAPHIQL_ASSETS_PATH}:version/:file`, (c) =>
    graphiqlAsset(c.req.param('version'), c.req.param('file'), c.req.header('accept-encoding')),
  );
  app.on(['GET', 'POST', 'OPTIONS'], '/graphql', async (c) => {
    const response = await yoga.fetch(c.req.raw, { scope: scopeOf(c) });
    const outgoing = (c.env as Partial<HttpBindings> | undefined)?.outgoing;
    if (outgoing && response.headers.get('content-type')?.startsWith('text/event-stream')) markEventStream(outgoing);
    return adapterResponse(response);
  });
  app.post('/webhooks/stripe', stripeWebhook({ ...deps.env, maxBodyBytes: deps.limits.maxBodyBytes, secret: deps.stripeWebhookSecret }));
  // A long call's events carry its whole transcript, word by word: they get the import body limit.
  app.post('/webhooks/retell', retellCallbacks({ ...deps.env, maxBodyBytes: deps.limits.maxImportBodyBytes, retell: deps.retellWebhook }));
  // The agent's tools during a call: each request carries the call object, transcript so far included.
  app.post(
    '/voice/retell/tools/:name',
    retellTools({ ...deps.env, maxBodyBytes: deps.limits.maxImportBodyBytes, retell: deps.retellWebhook }),
  );
  // Twilio's requests are small forms: the ordinary body limit.
  const twilio = { ...deps.env, maxBodyBytes: deps.limits.maxBodyBytes, twilio: deps.twilioWebhook };
  app.post(TWILIO_VOICE_PATH, twilioVoiceCallback(twilio));
  app.post(TWILIO_STATUS_PATH, twilioStatusCallback(twilio));
  // The voice runtime of Twilio calls reads its call's agent with the stream's token.
  app.get(VOICE_RUNTIME_CONFIG_PATH, voiceRuntimeConfig(deps.env));
  if (deps.console) app.route('/', consoleRoutes({ trustedDocuments: !!trustedDocuments, demoToken: deps.graphql.graphiqlToken }));
  app.route('/', createRestApp({ ...deps, docsToken: deps.graphql.graphiqlToken }));
  app.notFound(() => json(404, { detail: 'Not found.' }));
  app.onError((error, c) => {
    scopeOf(c).log.error({ err: error }, 'unhandled error');
    return json(500, { detail: 'A server error occurred.' });
  });
  return { fetch: app.fetch, createServer: laneServer };
}
