import { pino, type DestinationStream, type Logger } from 'pino';

// Credentials are redacted wherever they might appear: request headers, tokens, secrets, and connection
// strings (which may carry passwords).
const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
  'headers["stripe-signature"]',
  'headers["x-retell-signature"]',
  'authorization',
  'cookie',
  'token',
  '*.token',
  'secret',
  '*.secret',
  'jwt.secret',
  '*.jwt.secret',
  'password',
  '*.password',
  'jwtSecret',
  '*.jwtSecret',
  'stripeWebhookSecret',
  '*.stripeWebhookSecret',
  'metricsToken',
  '*.metricsToken',
  'apiKey',
  '*.apiKey',
  '*.*.apiKey',
  'retellWebhook.key',
  '*.retellWebhook.key',
  'databaseUrl',
  '*.databaseUrl',
  'redisUrl',
  '*.redisUrl',
];

/** JSON logs to stdout (or to `destination`, for tests). */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * A logger for work no HTTP request started, such as a dialer job: every line names the job and its id,
 * and the id of the request that caused it when known (a dispatch's `requestId`), so that one search
 * follows a dispatch into the calls it made.
 */
export function jobLogger(log: Logger, job: { name: string; id: string; requestId?: string | undefined }): Logger {
  return log.child({ job: job.name, jobId: job.id, ...(job.requestId ? { requestId: job.requestId } : {}) });
}
