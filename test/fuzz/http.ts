// One request of the fuzz as it goes on the wire, and its answer.

export interface HttpRequest {
  method: string;
  /** Path and query string, below the server's URL. */
  path: string;
  headers: Record<string, string>;
  body?: string | FormData | Uint8Array<ArrayBuffer> | undefined;
}

export interface HttpResponse {
  status: number;
  text: string;
  json: any;
}

/**
 * Sends `request`; an answer that takes longer than `timeoutMs` counts as none (status 0). A connection
 * the server closed after its previous answer (as it may when it answered without reading a body) is
 * only found on reuse, so a request that finds its connection closed is sent once more, on a new one.
 */
export async function send(baseUrl: string, request: HttpRequest, timeoutMs = 60_000): Promise<HttpResponse> {
  const first = await sendOnce(baseUrl, request, timeoutMs);
  return first.status === 0 ? sendOnce(baseUrl, request, timeoutMs) : first;
}

async function sendOnce(baseUrl: string, request: HttpRequest, timeoutMs: number): Promise<HttpResponse> {
  try {
    const response = await fetch(baseUrl + request.path, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, text, json };
  } catch (error) {
    return { status: 0, text: `${String(error)} (${String((error as Error).cause ?? '')})`, json: undefined };
  }
}

export const bearer = (token: string | undefined): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});

/**
 * Percent-encoding that, unlike encodeURIComponent, takes any string: a lone surrogate becomes the three
 * bytes a careless encoder writes for it (%ED%A0%80), which are not UTF-8.
 */
export function percentEncode(text: string): string {
  let out = '';
  for (const char of text) {
    const unit = char.charCodeAt(0);
    out +=
      char.length === 1 && unit >= 0xd800 && unit <= 0xdfff
        ? [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
            .map((byte) => `%${byte.toString(16).toUpperCase()}`)
            .join('')
        : encodeURIComponent(char);
  }
  return out;
}
