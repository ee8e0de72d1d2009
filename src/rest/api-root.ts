import type { Context } from 'hono';
import { json } from '../http/errors.js';
import type { RouteDefinition } from './route.js';

// GET /api/v1/: where a newcomer lands from the start banner. Like Django REST Framework's API root, it
// links every endpoint, the docs, the OpenAPI document and GraphQL; JSON for programs, a page of links for
// browsers. It holds no customer data, so it needs no token.

export interface ApiRootPaths {
  prefix: string;
  docs: string;
  schema: string;
  graphql: string;
}

interface Endpoint {
  method: string;
  path: string;
  summary: string;
  /** Where a path has no parameter: the link to follow. */
  url?: string;
}

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

export function apiRoot(routes: readonly RouteDefinition[], paths: ApiRootPaths) {
  return (c: Context): Response => {
    const origin = new URL(c.req.url).origin;
    const endpoints: Endpoint[] = routes.map((route) => {
      const path = paths.prefix + route.path;
      return { method: route.method, path, summary: route.summary, ...(path.includes('{') ? {} : { url: origin + path }) };
    });
    const links = { docs: origin + paths.docs, schema: origin + paths.schema, graphql: origin + paths.graphql };
    const authentication = 'Every endpoint needs Authorization: Bearer <token> (npm start prints a demo token; npm run token makes one).';
    if (!c.req.header('accept')?.includes('text/html')) return json(200, { ...links, authentication, endpoints });
    const rows = endpoints
      .map(
        (e) =>
          `<tr><td>${e.method}</td><td>${e.url && e.method === 'GET' ? `<a href="${escapeHtml(e.url)}">${escapeHtml(e.path)}</a>` : escapeHtml(e.path)}</td><td>${escapeHtml(e.summary)}</td></tr>`,
      )
      .join('\n');
    return c.html(`<!doctype html>
<html lang="en">
  <head><meta charset="utf-8" /><title>v1 REST API</title>
    <style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:60rem}td{padding:.2rem .8rem .2rem 0;vertical-align:top}</style>
  </head>
  <body>
    <h1>v1 REST API</h1>
    <p><a href="${links.docs}">Interactive docs</a> · <a href="${links.schema}">OpenAPI document</a> · <a href="${links.graphql}">GraphQL (GraphiQL)</a></p>
    <p>${escapeHtml(authentication)}</p>
    <table>
${rows}
    </table>
  </body>
</html>
`);
  };
}
