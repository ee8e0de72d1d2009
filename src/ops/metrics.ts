import { collectDefaultMetrics, Counter, Registry } from 'prom-client';

// Every Prometheus metric of the process, served at /metrics. Labels only take values from bounded sets
// (route patterns, known methods, operation names up to a cap) so that no client can grow the series
// without bound. Metrics are per process: several processes are told apart by Prometheus' target labels.

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

const registers = [registry];

export const dbStatements = new Counter({
  name: 'db_statements_total',
  help: 'SQL statements sent to the database through Prisma (transaction starts included).',
  registers,
});
