import { pino, type Logger } from 'pino';

/** JSON logs; credentials are redacted wherever they might appear. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'token', '*.token', 'secret', '*.secret'],
      censor: '[redacted]',
    },
  });
}
