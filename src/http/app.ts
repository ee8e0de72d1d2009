import { Hono } from 'hono';
import type { Logger } from 'pino';
import type { PrismaClient } from '../generated/prisma/client.js';
import { json } from '../rest/errors.js';
import { createRestApp } from '../rest/router.js';
import type { Authenticator } from '../services/auth.js';
import type { Clock } from '../services/context.js';
import { createGraphQLServer } from './graphql.js';
import { stripeWebhook } from './stripe-webhook.js';

export interface AppDeps {
  db: PrismaClient;
  authenticator: Authenticator;
  clock: Clock;
  log: Logger;
  maxBodyBytes: number;
  graphql: { introspection: boolean; graphiql: boolean };
  stripeWebhookSecret?: string | undefined;
}

/** One HTTP application: GraphQL at /graphql, v1 REST under /api/v1/, payment webhooks under /webhooks/. */
export function createApp(deps: AppDeps): Hono {
  const app = new Hono({ strict: true });
  const yoga = createGraphQLServer({ ...deps, ...deps.graphql });

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.on(['GET', 'POST', 'OPTIONS'], '/graphql', (c) => yoga.fetch(c.req.raw));
  app.post('/webhooks/stripe', stripeWebhook({ ...deps, secret: deps.stripeWebhookSecret }));
  app.route('/', createRestApp(deps));
  app.notFound(() => json(404, { detail: 'Not found.' }));
  app.onError((error) => {
    deps.log.error({ err: error }, 'unhandled error');
    return json(500, { detail: 'A server error occurred.' });
  });
  return app;
}
