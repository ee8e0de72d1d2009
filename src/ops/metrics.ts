import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

// Every Prometheus metric of the process, served at /metrics. Labels only take values from bounded sets
// (route patterns, known methods, operation names up to a cap) so that no client can grow the series
// without bound. Metrics are per process: several processes are told apart by Prometheus' target labels.

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

const registers = [registry];

export const httpRequests = new Counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by method, route pattern and status.',
  labelNames: ['method', 'route', 'status'] as const,
  registers,
});

export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from receiving an HTTP request to its response headers, by method, route pattern and status.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers,
});

export const graphqlOperations = new Counter({
  name: 'graphql_operations_total',
  help: 'GraphQL operations executed, by operation type and name, and whether the result carried errors.',
  labelNames: ['operation_type', 'operation_name', 'result'] as const,
  registers,
});

export const graphqlOperationDuration = new Histogram({
  name: 'graphql_operation_duration_seconds',
  help: 'Execution time of GraphQL operations (after parsing, validation and authentication).',
  labelNames: ['operation_type', 'operation_name'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers,
});

export const dbStatements = new Counter({
  name: 'db_statements_total',
  help: 'SQL statements sent to the database through Prisma (transaction starts included).',
  registers,
});

export const dbNamedStatements = new Counter({
  name: 'db_named_statements_total',
  help: 'Statements run through a store, by statement name (a fixed set, written in the code).',
  labelNames: ['statement'] as const,
  registers,
});

export const dbNamedStatementDuration = new Histogram({
  name: 'db_named_statement_duration_seconds',
  help: 'Time from sending a store statement to its rows, by statement name.',
  labelNames: ['statement'] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
  registers,
});

export const rateLimitedRequests = new Counter({
  name: 'rate_limited_requests_total',
  help: 'Requests refused by a per-user rate limit, by budget (requests, import, dispatch).',
  labelNames: ['bucket'] as const,
  registers,
});

// The dialer's state, read from the database at each scrape (see src/http/metrics-endpoint.ts): the same
// from every process, so aggregate several instances with max. No campaign or user label: unbounded.

export const dialerCallsInFlight = new Gauge({
  name: 'dialer_calls_in_flight',
  help: 'Calls placed and not finished yet, across every worker.',
  registers,
});

export const dialerQueueDepth = new Gauge({
  name: 'dialer_queue_depth',
  help: 'Contacts of running campaigns whose next call is due now and not placed yet.',
  registers,
});

export const dialerCreditHeldCents = new Gauge({
  name: 'dialer_credit_held_cents',
  help: 'Credit held for calls in flight, across every account, in cents.',
  registers,
});

export const graphqlReadPaths = new Counter({
  name: 'graphql_read_paths_total',
  help: 'Query operations by how they were answered: compiled (one SQL statement writing the JSON) or resolvers.',
  labelNames: ['path'] as const,
  registers,
});

export const dialerLagSeconds = new Gauge({
  name: 'dialer_lag_seconds',
  help: 'How long the longest-waiting contact of a running campaign has been due and not called (0 when none is), across every worker.',
  registers,
});

// What the processes that dial did, per process (sum them across instances).

export const callsEnded = new Counter({
  name: 'dialer_calls_ended_total',
  help: 'Calls whose result this process wrote, by outcome.',
  labelNames: ['outcome'] as const,
  registers,
});

export const providerErrors = new Counter({
  name: 'telephony_provider_errors_total',
  help: 'Calls the telephony provider would not start, by provider and reason (retry_later, invalid_destination, error).',
  labelNames: ['provider', 'reason'] as const,
  registers,
});

export const webhookDeliveries = new Counter({
  name: 'webhook_deliveries_total',
  help: 'Webhook delivery attempts this process recorded, by the state they left the delivery in (succeeded, pending, failed).',
  labelNames: ['state'] as const,
  registers,
});

export const jobQueueBacklog = new Gauge({
  name: 'job_queue_backlog',
  help: 'Jobs waiting in a job queue (created or retrying, those scheduled for later included), by queue; read at each scrape.',
  labelNames: ['queue'] as const,
  registers,
});

export const graphqlLeanLane = new Counter({
  name: 'graphql_lean_lane_total',
  help: 'GraphQL requests the lean lane began (a known compiled read): answered there, or handed over to the full path.',
  labelNames: ['outcome'] as const,
  registers,
});

export const v1LeanLane = new Counter({
  name: 'v1_lean_lane_total',
  help: 'v1 GET requests of JSON answered by the lean lane, in front of the full path.',
  registers,
});
