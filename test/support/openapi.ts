import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';
import type { TestApp } from './app.js';

export interface OpenApiChecker {
  /** The document the server serves at /api/v1/schema/. */
  document: any;
  /** Expects `body` to match the response schema the document gives for that operation and status. */
  expectMatches(path: string, method: string, status: number, body: unknown): void;
}

/** Checks v1 responses against the OpenAPI document the same server publishes. */
export async function openApiChecker(app: TestApp): Promise<OpenApiChecker> {
  const document = (await app.request('GET', '/api/v1/schema/')).json;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema({ $id: 'openapi', components: document.components }, 'openapi');
  return {
    document,
    expectMatches(path, method, status, body) {
      const schema = document.paths[path][method].responses[status].content['application/json'].schema;
      // The operation's schema refers to the document's components, registered above as `openapi`.
      const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/')));
      validate(body);
      expect(validate.errors ?? [], JSON.stringify(validate.errors)).toEqual([]);
    },
  };
}
