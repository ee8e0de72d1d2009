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

export async function readBody(request: Request, maxBytes: number, arriving = new ArrivingBody(request, maxBytes)): Promise<unknown> {
  const contentType = request.headers.get('content-type') ?? '';
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > maxBytes) throw new PayloadTooLargeError(maxBytes);

  if (!request.body) return {};
  if (mediaType === 'multipart/form-data') return formToObject(await readMultipart(request, contentType, arriving));
  const bytes = await arriving.whole();
  if (bytes.byteLength === 0) return {};
  const text = new TextDecoder().decode(bytes);
  if (isJsonMediaType(mediaType)) {
    refuseDeepJsonText(text);
    try {
      // Only a run of 16+ digits can be an integer that JSON.parse would round; the common body
      // takes the native parser, which is several times faster on large imports.
      return LOSSLESS_NUMBER.test(text) ? parseLosslessJson(text, undefined, parseNumber) : JSON.parse(text);
    } catch (error) {
      throw new BodyParseError(`JSON parse error - ${(error as Error).message}`);
    }
  }
  if (mediaType === 'application/x-www-form-urlencoded') return formToObject(new URLSearchParams(text));
  throw new UnsupportedMediaTypeError(mediaType || 'none');
}

/** Text that readBody parses losslessly rather than with JSON.parse. */
export const LOSSLESS_NUMBER = /\d{16}/;

export const isJsonMediaType = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');

async function readMultipart(request: Request, contentType: string, arriving: ArrivingBody): Promise<FormData> {
  // Django's words for a multipart body without a boundary, which DRF passes on.
  if (!/;\s*boundary=("[^"]+"|[^\s;"]+)/i.test(contentType)) {
    throw new BodyParseError('Multipart form parse error - Invalid boundary in multipart: None');
  }
  // A copy: fetch's Request takes no view of a buffer that can grow.
  const body = (await arriving.whole()).slice();
  try {
    return await new Request(request.url, { method: 'POST', headers: { 'content-type': contentType }, body }).formData();
  } catch (error) {
    throw new BodyParseError(`Multipart form parse error - ${(error as Error).message}`);
  }
}

/** The body exactly as sent: webhook signatures are computed over these bytes. */
export async function readRawBody(request: Request, maxBytes: number): Promise<Uint8Array<ArrayBuffer>> {
  if (Number(request.headers.get('content-length') ?? '0') > maxBytes) throw new PayloadTooLargeError(maxBytes);
  return request.body ? (await new ArrivingBody(request, maxBytes).whole()).slice() : new Uint8Array();
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

/** Bodies up to this size whose length is declared are read into a plain buffer. */
const SMALL_BODY_BYTES = 1024 * 1024;

/**
 * A body's bytes, read as they arrive into one buffer, refused past `maxBytes`. The buffer grows in place
 * as they come and is emptied by release(), which gives its memory back at once rather than at V8's next
 * full collection (a 14 MB import would otherwise stay in memory through the next ones). A reader may look
 * at the bytes while they arrive (json-list.ts), stop part way and leave the whole body to readBody. They
 * are read as fast as they come whoever looks: node's web streams would otherwise queue every chunk anyway.
 */
export class ArrivingBody {
  private readonly buffer: ArrayBuffer;
  private size = 0;
  private ended = false;
  private released = false;
  private failure: unknown;
  private reading: Promise<void> | undefined;
  private arrival!: Promise<void>;
  private arrived!: () => void;

  constructor(
    private readonly request: Request,
    private readonly maxBytes: number,
  ) {
    const declared = Number(request.headers.get('content-length') ?? '');
    const known = Number.isSafeInteger(declared) && declared > 0 && declared <= maxBytes;
    // A growable buffer takes some 8 µs more to make: small bodies of a known length get a plain one.
    this.buffer =
      known && declared <= SMALL_BODY_BYTES
        ? new ArrayBuffer(declared)
        : new ArrayBuffer(0, { maxByteLength: known ? declared : maxBytes });
    this.nextArrival();
  }

  /** The bytes arrived so far; the buffer grows and is released, so hold positions rather than this view. */
  get bytes(): Uint8Array<ArrayBuffer> {
    return new Uint8Array(this.buffer, 0, this.size);
  }

  /** Waits until more than `seen` bytes have arrived (true) or the body has ended with `seen` (false). */
  async more(seen: number): Promise<boolean> {
    this.reading ??= this.read();
    while (this.size <= seen && !this.ended) await this.arrival;
    if (this.size > seen) return true;
    if (this.failure !== undefined) throw this.failure;
    return false;
  }

  /** Whether the body has all arrived. */
  get complete(): boolean {
    return this.ended && this.failure === undefined;
  }

  /** The whole body, once the rest has arrived. */
  async whole(): Promise<Uint8Array<ArrayBuffer>> {
    while (await this.more(this.size));
    return this.bytes;
  }

  /** Gives the buffer's memory back; the rest of the body, if any, is read and dropped. */
  release(): void {
    this.released = true;
    this.size = 0;
    if (this.buffer.resizable) this.buffer.resize(0);
  }

  private nextArrival() {
    this.arrival = new Promise((resolve) => (this.arrived = resolve));
  }

  private async read(): Promise<void> {
    try {
      if (!this.request.body) return;
      const reader = this.request.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        if (this.released) continue;
        const size = this.size + value.byteLength;
        if (size > (this.buffer.resizable ? this.buffer.maxByteLength : this.buffer.byteLength)) {
          await reader.cancel();
          throw new PayloadTooLargeError(this.maxBytes);
        }
        if (this.buffer.resizable) this.buffer.resize(size);
        new Uint8Array(this.buffer).set(value, this.size);
        this.size = size;
        const arrived = this.arrived;
        this.nextArrival();
        arrived();
      }
    } catch (error) {
      this.failure = error;
    } finally {
      this.ended = true;
      this.arrived();
    }
  }
}
