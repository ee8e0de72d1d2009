import { Duplex } from 'node:stream';
import { brotliCompressSync, constants, createBrotliCompress, createGzip, gzipSync } from 'node:zlib';
import type { MiddlewareHandler } from 'hono';

// Responses are compressed for clients that ask (Accept-Encoding): brotli, else gzip. Brotli at quality 4
// costs about what gzip's default does and saves more. Streams that must arrive as they are written
// (subscriptions, incremental delivery) are left alone, as are bodies too small to gain and bodies
// already encoded (the precompressed GraphiQL assets).

/** Below this many bytes (when the length is known) compression costs more than it saves. */
const MIN_BYTES = 1024;

const COMPRESSIBLE = /^(application\/(json|graphql-response\+json|javascript)|text\/(html|css|csv|plain|javascript))\b/;

export type Encoding = 'br' | 'gzip';

/** The encoding to answer with, from an Accept-Encoding header: brotli first, gzip next, q=0 refuses. */
export function chooseEncoding(accept: string | undefined): Encoding | null {
  if (!accept) return null;
  const offered = new Map<string, number>();
  for (const part of accept.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    offered.set(name.trim(), q ? Number(q.slice(2)) || 0 : 1);
  }
  const accepts = (name: string) => (offered.get(name) ?? offered.get('*') ?? 0) > 0;
  return accepts('br') ? 'br' : accepts('gzip') ? 'gzip' : null;
}

const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } };
const GZIP = { level: constants.Z_DEFAULT_COMPRESSION };

function compressor(encoding: Encoding) {
  return encoding === 'br' ? createBrotliCompress(BROTLI) : createGzip(GZIP);
}

/** The Vary header once it says the answer depends on Accept-Encoding. */
const varyOnEncoding = (vary: string | undefined) =>
  vary === '*' || /\baccept-encoding\b/i.test(vary ?? '') ? vary! : vary ? `${vary}, Accept-Encoding` : 'Accept-Encoding';

export interface CompressedAnswer {
  vary: string;
  /** Null when the client accepts neither encoding: the body goes as it is, with the Vary header. */
  encoding: Encoding | null;
  body: Buffer;
}

/**
 * What compression() makes of a finished answer of text, for the lean lanes, which write their answers
 * themselves; null when it leaves the answer as it is. `declaredLength` is the answer's Content-Length
 * header as the full path's handler sets it (null when it sets none, as for v1's JSON answers).
 */
export function compressAnswer(
  accept: string | undefined,
  contentType: string,
  vary: string | undefined,
  body: string,
  declaredLength: number | null,
): CompressedAnswer | null {
  if (!accept || !COMPRESSIBLE.test(contentType) || (declaredLength !== null && declaredLength < MIN_BYTES)) return null;
  const encoding = chooseEncoding(accept);
  const text = Buffer.from(body, 'utf8');
  const compressed = encoding === 'br' ? brotliCompressSync(text, BROTLI) : encoding === 'gzip' ? gzipSync(text, GZIP) : text;
  return { vary: varyOnEncoding(vary), encoding, body: compressed };
}

export function compression(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    // Most API clients ask for no encoding: their response stays as it was built, which the Node adapter
    // writes in one call (any change to a finished response makes Hono copy it into a stream).
    const accept = c.req.header('accept-encoding');
    if (!accept) return;
    const response = c.res;
    const length = response.headers.get('content-length');
    if (
      !response.body ||
      c.req.method === 'HEAD' ||
      response.status === 206 ||
      response.headers.has('content-encoding') ||
      !COMPRESSIBLE.test(response.headers.get('content-type') ?? '') ||
      /\bno-transform\b/i.test(response.headers.get('cache-control') ?? '') ||
      (length !== null && Number(length) < MIN_BYTES)
    )
      return;
    const vary = response.headers.get('vary') ?? undefined;
    if (varyOnEncoding(vary) !== vary) c.header('vary', varyOnEncoding(vary));
    const encoding = chooseEncoding(accept);
    if (!encoding) return;
    const zipped = Duplex.toWeb(compressor(encoding)) as unknown as TransformStream<Uint8Array, Uint8Array>;
    // Hono copies the old response's headers onto the one set here; the length then goes.
    c.res = new Response(c.res.body!.pipeThrough(zipped), c.res);
    c.res.headers.delete('content-length');
    c.res.headers.set('content-encoding', encoding);
    const etag = c.res.headers.get('etag');
    if (etag && !etag.startsWith('W/')) c.res.headers.set('etag', `W/${etag}`);
  };
}
