import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

// Swagger UI for /api/v1/docs/, its assets served from the swagger-ui-dist package so the page works
// with no network (no CDN).

export const docsAssetsPath = '/api/v1/docs/assets/';

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const assetDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

export async function serveDocsAsset(file: string): Promise<Response> {
  const type = ASSETS[file];
  if (!type)
    return new Response(JSON.stringify({ detail: 'Not found.' }), { status: 404, headers: { 'content-type': 'application/json' } });
  const content = await readFile(join(assetDir, file));
  return new Response(content, { headers: { 'content-type': type, 'cache-control': 'public, max-age=86400' } });
}

/**
 * The page; with a token (the demo's, in development, as GraphiQL opens with it) Swagger UI starts
 * authorized with it, so "Try it out" works at once.
 */
export function docsPage(schemaUrl: string, token?: string): string {
  // JSON in a script: `<` escaped so that nothing in it can close the script.
  const authorize = token
    ? `\n        onComplete: () => window.ui.preauthorizeApiKey('bearerAuth', ${JSON.stringify(token).replace(/</g, '\\u003c')}),`
    : '';
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>v1 REST API</title>
    <link rel="icon" href="${docsAssetsPath}favicon-32x32.png" />
    <link rel="stylesheet" href="${docsAssetsPath}swagger-ui.css" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${docsAssetsPath}swagger-ui-bundle.js"></script>
    <script src="${docsAssetsPath}swagger-ui-standalone-preset.js"></script>
    <script>
      window.ui = SwaggerUIBundle({
        url: ${JSON.stringify(schemaUrl)},
        dom_id: '#swagger-ui',
        presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
        layout: 'StandaloneLayout',
        persistAuthorization: true,${authorize}
      });
    </script>
  </body>
</html>
`;
}
