import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { resolveJwtSecret } from '../db/dev-secret.js';
import { signToken } from '../services/auth.js';
import { uuid } from '../services/validation.js';

// `npm run token -- --sub <uuid> [--role admin] [--ttl 3600]` prints a token signed with the secret the
// server uses (JWT_SECRET, or the development secret kept in the data folder).
const { values } = parseArgs({
  options: { sub: { type: 'string' }, role: { type: 'string' }, ttl: { type: 'string', default: '86400' } },
});
const fail = (message: string) => {
  console.error(`${message}\nusage: npm run token -- --sub <uuid> [--role admin] [--ttl seconds]`);
  process.exit(2);
};
if (!values.sub || !uuid.safeParse(values.sub).success) fail('--sub must be a UUID');
if (values.role !== undefined && values.role !== 'admin') fail('--role can only be admin');
const ttlSeconds = Number(values.ttl);
if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0) fail('--ttl must be a positive number of seconds');

const config = loadConfig();
if (config.jwt.jwksUrl) fail('Tokens come from your identity provider when JWT_JWKS_URL is set.');
const secret = await resolveJwtSecret(config);
console.log(
  await signToken(secret!, {
    sub: values.sub!,
    role: values.role === 'admin' ? 'admin' : undefined,
    ttlSeconds,
    issuer: config.jwt.issuer,
    audience: config.jwt.audience,
  }),
);
