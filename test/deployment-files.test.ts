import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { validate } from 'dockerfile-utils';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../src/config.js';

// The Dockerfile and compose.yaml, checked without a container engine (this project's machines cannot
// run containers: docs/decisions.md). Each is linted (dockerfile-utils' validator, dclint with the
// Compose Specification's schema), and what the deployment relies on is read back from them: a
// non-root multi-stage build with npm ci and npm run build, migrations run once before the API and the
// workers, probes on the ports the service's own configuration gives, and an environment the service's
// own configuration accepts.

const root = new URL('..', import.meta.url).pathname;
const dockerfile = readFileSync(`${root}Dockerfile`, 'utf8');
const compose = parse(readFileSync(`${root}compose.yaml`, 'utf8'), { merge: true }) as Compose;

interface Service {
  build?: string;
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}
interface Compose {
  services: Record<string, Service>;
}

/** A service's environment as compose hands it over: `${NAME:-default}` and `${NAME:?message}` from `given`. */
function environmentOf(service: Service, given: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(service.environment ?? {}).map(([name, value]) => [
      name,
      String(value).replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_, variable: string, kind?: string, fallback?: string) => {
        if (given[variable]) return given[variable];
        if (kind === '?') throw new Error(`${variable}: ${fallback}`);
        return fallback ?? '';
      }),
    ]),
  );
}

/** The lines of the Dockerfile's last stage, continuation lines joined. */
function finalStage(): string[] {
  const lines = dockerfile.replace(/\\\n\s*/g, ' ').split('\n');
  const from = lines.findLastIndex((line) => line.startsWith('FROM '));
  return lines.slice(from).filter((line) => line.trim() !== '');
}

describe('Dockerfile', () => {
  it('passes the Dockerfile validator', () => {
    expect(validate(dockerfile).map((d) => `${d.range.start.line + 1}: ${d.message}`)).toEqual([]);
  });

  it('builds in a stage of its own with npm ci and npm run build, from a base image a deployer may replace', () => {
    expect(dockerfile.match(/^FROM /gm)).toHaveLength(2);
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:20-/m);
    expect(dockerfile).toMatch(/^FROM \$\{NODE_IMAGE\} AS build$/m);
    expect(dockerfile).toMatch(/npm ci --no-audit --no-fund\s+\\\s+&& npm run build/);
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
  });

  it('runs as a user other than root, start:prod by default, with a liveness probe on /healthz', () => {
    const stage = finalStage();
    const user = stage.find((line) => line.startsWith('USER '));
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^USER (root|0)(:|$)/);
    expect(stage.at(-1)).toBe('CMD ["npm", "run", "start:prod"]');
    expect(stage.find((line) => line.startsWith('HEALTHCHECK '))).toContain("'/healthz'");
    // What the compiled service reads at run time besides node_modules and dist.
    expect(stage).toContain('COPY --from=build /app/prisma ./prisma');
  });
});

describe('compose.yaml', () => {
  const secrets = { JWT_SECRET: 'a-deployment-secret-of-more-than-32-characters' };

  it('passes dclint, which validates it against the Compose Specification', async () => {
    const run = promisify(execFile)(process.execPath, [`${root}node_modules/dclint/bin/dclint.cjs`, `${root}compose.yaml`]);
    await expect(run).resolves.toBeDefined();
  }, 120_000);

  it('runs the API, the workers, PostgreSQL and Redis, with the migrations once before the API and the workers', () => {
    const { api, worker, migrate, postgres, redis } = compose.services;
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'migrate', 'postgres', 'redis', 'worker']);
    for (const service of [api, worker, migrate]) expect(service!.build).toBe('.');
    expect(migrate!.command).toEqual(['node', 'dist/cli/migrate.js']);
    expect(migrate!.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    for (const service of [api, worker]) {
      expect(service!.depends_on).toMatchObject({ migrate: { condition: 'service_completed_successfully' } });
    }
    expect(worker!.command).toEqual(['npm', 'run', 'worker:prod']);
    expect(postgres!.healthcheck?.test).toContain('pg_isready');
    expect(redis!.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
  });

  it("gives every service an environment the service's configuration accepts, and probes each on its own port", () => {
    const { api, worker, migrate } = compose.services;
    const apiConfig = loadConfig(environmentOf(api!, secrets));
    const workerConfig = loadConfig(environmentOf(worker!, secrets));
    loadConfig(environmentOf(migrate!, secrets));
    expect(apiConfig).toMatchObject({ env: 'production', runDialer: false, redisUrl: 'redis://redis:6379' });
    expect(apiConfig.databaseUrl).toMatch(/@postgres:5432\//);
    expect(workerConfig.databaseUrl).toBe(apiConfig.databaseUrl);
    expect(api!.healthcheck!.test.join(' ')).toContain(`http://127.0.0.1:${apiConfig.port}/healthz`);
    expect(worker!.healthcheck!.test.join(' ')).toContain(`http://127.0.0.1:${workerConfig.workerPort}/healthz`);
  });

  it('refuses to start without JWT_SECRET rather than with a default one', () => {
    expect(() => environmentOf(compose.services.api!, {})).toThrow(/JWT_SECRET/);
  });
});
