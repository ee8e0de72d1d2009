import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Config } from '../config.js';

/**
 * The HS256 secret in force. Without configuration (development only; production refuses to start)
 * one is generated on first start and kept in the data folder, so tokens survive restarts.
 */
export async function resolveJwtSecret(config: Config): Promise<string | undefined> {
  if (config.jwt.secret || config.jwt.jwksUrl) return config.jwt.secret;
  const file = join(resolve(config.dataDir), 'jwt-secret');
  const existing = await readFile(file, 'utf8').catch(() => null);
  if (existing && existing.trim().length >= 32) return existing.trim();
  await mkdir(resolve(config.dataDir), { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  await writeFile(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}
