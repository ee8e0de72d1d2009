import { isInteger, isSafeNumber, parse as parseLosslessJson } from 'lossless-json';
import { PayloadTooLargeError, UnsupportedMediaTypeError } from '../services/errors.js';
import { refuseDeepJsonText } from '../services/input-safety.js';

// Request bodies as DRF parses them: JSON, urlencoded forms and multipart forms; anything else is a 415.

/** A body that cannot be read as its media type says; the message is DRF's (`JSON parse error - ...`). */
export class BodyParseError extends Error {}

/** JSON numbers that are integers beyond 2^53 become bigint, so no value is silently rounded. */
function parseNumber(text: string): number | bigint {
  return isInteger(text) && !isSafeNumber(text) ? BigInt(text) : Number(text);
}

export async function readBody(request: Request, maxBytes: number): Promise<unknown> {
  const contentType = request.headers.get('content-type') ?? '';
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > maxBytes) throw new PayloadTooLargeError(maxBytes);

  if (!request.body) return {};
  if (mediaType === 'multipart/form-data') return formToObject(await readMultipart(request, contentType, maxBytes));
  const bytes = await readLimited(request, maxBytes);
  if (bytes.byteLength === 0) return {};
  const text = new TextDecoder().decode(bytes);
  if (mediaType === 'application/json' || mediaType.endsWith('+json')) {
    refuseDeepJsonText(text);
    try {
      // Only a run of 16+ digits can be an integer that JSON.parse would round; the common body
      // takes the native parser, which is several times faster on large imports.
      return /\d{16}/.test(text) ? parseLosslessJson(text, undefined, parseNumber) : JSON.parse(text);
    } catch (error) {
      throw new BodyParseError(`JSON parse error - ${(error as Error).message}`);
    }
  }
  if (mediaType === 'application/x-www-form-urlencoded') return formToObject(new URLSearchParams(text));
  throw new UnsupportedMediaTypeError(mediaType || 'none');
}

async function readMultipart(request: Request, contentType: string, maxBytes: number): Promise<FormData> {
  // Django's words for a multipart body without a boundary, which DRF passes on.
  if (!/;\s*boundary=("[^"]+"|[^\s;"]+)/i.test(contentType)) {
    throw new BodyParseError('Multipart form parse error - Invalid boundary in multipart: None');
  }
  const body = await readLimited(request, maxBytes);
  try {
    return await new Request(request.url, { method: 'POST', headers: { 'content-type': contentType }, body }).formData();
  } catch (error) {
    throw new BodyParseError(`Multipart form parse error - ${(error as Error).message}`);
  }
}

/** The body exactly as sent: webhook signatures are computed over these bytes. */
export async function readRawBody(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (Number(request.headers.get('content-length') ?? '0') > maxBytes) throw new PayloadTooLargeError(maxBytes);
  return request.body ? readLimited(request, maxBytes) : new Uint8Array();
}

/** A repeated key becomes a list; a single one stays a string (or File). */
function formToObject(form: URLSearchParams | FormData): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of new Set(form.keys())) {
    const values = form.getAll(key);
    out[key] = values.length === 1 ? values[0] : values;
  }
  return out;
}

/**
 * The body's bytes, refused past `maxBytes`. With a declared length they are copied once, into a buffer of
 * that size, as they arrive: a 14 MB import is not held twice over as chunks and then their concatenation.
 */
async function readLimited(request: Request, maxBytes: number): Promise<Uint8Array<ArrayBuffer>> {
  const reader = request.body!.getReader();
  const declared = Number(request.headers.get('content-length') ?? '');
  const whole = Number.isSafeInteger(declared) && declared > 0 && declared <= maxBytes ? new Uint8Array(declared) : undefined;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > maxBytes || (whole && size + value.byteLength > whole.byteLength)) {
      await reader.cancel();
      throw new PayloadTooLargeError(maxBytes);
    }
    if (whole) whole.set(value, size);
    else chunks.push(value);
    size += value.byteLength;
  }
  if (whole) return size === whole.byteLength ? whole : whole.subarray(0, size);
  return Buffer.concat(chunks);
}
