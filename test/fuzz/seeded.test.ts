import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { seedFixture } from './fixture.js';
import { runFuzz } from './runner.js';

// A small, seeded run of the fuzz in every `npm test`, on whichever database the suite runs on; `npm
// run fuzz` runs 100,000 requests against a production build.

const REQUESTS = 1_500;

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ introspection: false });
});
afterAll(() => app.close());

it(`answers ${REQUESTS} generated requests below 500, keeps answering, and changes nothing when it refuses`, async () => {
  const fixture = await seedFixture(app.url, app.db, (sub, role) => app.token(sub, role));
  const report = await runFuzz({ url: app.url, sql: app.sql, fixture }, { seed: 20_260_116, runs: REQUESTS });
  expect(report.failures).toEqual([]);
  expect(report.requests).toBe(REQUESTS);
  // The generated requests reach the service, not only its refusals.
  expect(report.byStatusClass['2xx']).toBeGreaterThan(REQUESTS / 20);
  expect(report.byStatusClass['4xx']).toBeGreaterThan(REQUESTS / 4);
}, 120_000);
