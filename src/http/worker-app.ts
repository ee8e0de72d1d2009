import { Hono } from 'hono';
import type { JobBacklog } from '../jobs/queues.js';
import type { Readiness } from '../ops/readiness.js';
import type { ServiceEnv } from '../services/context.js';
import { json } from './errors.js';
import { metricsEndpoint } from './metrics-endpoint.js';
import { readinessEndpoint } from './readiness-endpoint.js';
import { requestMetrics } from './request-metrics.js';
import { requestScope, scopeOf } from './request-scope.js';

export interface WorkerAppDeps {
  env: Pick<ServiceEnv, 'sql' | 'clock' | 'log'>;
  /** When set, /metrics answers only requests bearing this token. */
  metricsToken: string | undefined;
  readiness: Readiness;
  jobBacklog: JobBacklog;
}

/** The HTTP of `npm run worker`: the operations endpoints /healthz, /readyz and /metrics, and nothing else. */
export function createWorkerApp(deps: WorkerAppDeps): Hono {
  const app = new Hono({ strict: true });
  app.use(requestScope(deps.env.log), requestMetrics());
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', readinessEndpoint(deps.readiness));
  app.get('/metrics', metricsEndpoint(deps.env, deps.metricsToken, deps.jobBacklog));
  app.notFound(() => json(404, { detail: 'Not found.' }));
  app.onError((error, c) => {
    scopeOf(c).log.error({ err: error }, 'unhandled error');
    return json(500, { detail: 'A server error occurred.' });
  });
  return app;
}
