import { request as httpRequest } from 'node:http';

// A request as a plain client sends it (node:http, a new connection, no Accept-Encoding unless given),
// and its answer as it came: the lean-lane tests compare answers to the byte, headers in their order.

export interface RawAnswer {
  status: number;
  /** Every header as written, in order, but the date. */
  headers: [string, string][];
  text: string;
  /** The body as it came, compressed or not. */
  bytes: Buffer;
}

export function rawRequest(
  url: string,
  { method = 'GET', headers = {}, body }: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
        const bytes = Buffer.concat(chunks);
        resolve({
          status: res.statusCode!,
          headers: pairs.filter(([name]) => name.toLowerCase() !== 'date'),
          text: bytes.toString('utf8'),
          bytes,
        });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}
