import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A customer's webhook receiver on a real socket: it records every request and answers as the test
// says (a status, a delay, no answer at all), per request.

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

/** What to do with a request: a status (and headers), or `hang` to keep it open until the receiver closes. */
export type Answer = { status: number; delayMs?: number; headers?: Record<string, string> } | 'hang';

export async function startReceiver(answer: (request: Received, index: number) => Answer = () => ({ status: 200 })) {
  const received: Received[] = [];
  const hanging = new Set<ServerResponse>();
  let decide = answer;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: Received = {
        path: req.url ?? '/',
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      received.push(request);
      const reply = decide(request, received.length - 1);
      if (reply === 'hang') {
        hanging.add(res);
        return;
      }
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(reply.status, reply.headers ?? {});
        res.end('ok');
      }, reply.delayMs ?? 0);
    });
  });
  // Idle connections are left for the sender to end, as support/app.ts explains.
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    /** The requests whose body has this event type. */
    ofType: (type: string) => received.filter((r) => (JSON.parse(r.body) as { type: string }).type === type),
    answer(next: typeof answer) {
      decide = next;
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
