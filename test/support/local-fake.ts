import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// What every stand-in for a provider does alike: listen on a local port, answer each request (a request
// the fake itself fails on is a 500 in the provider's own error shape), and play calls on its own, which
// close() waits for.

export abstract class LocalFake {
  url = '';
  private server: Server | undefined;
  private readonly playing = new Set<Promise<void>>();

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => reply(res, 500, this.failure(error)));
    });
    // Idle connections are left for the client to end, as support/app.ts explains.
    this.server.keepAliveTimeout = 0;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    await this.settled();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  /** Waits until every call the fake is playing on its own has ended. */
  async settled(): Promise<void> {
    while (this.playing.size) await Promise.all([...this.playing]);
  }

  /** Plays a call on its own, for settled() to wait for. */
  protected keepPlaying(playing: Promise<void>): void {
    this.playing.add(playing);
    void playing.finally(() => this.playing.delete(playing));
  }

  protected abstract handle(req: IncomingMessage, res: ServerResponse): Promise<void>;

  /** The provider's error body for a request the fake failed on. */
  protected abstract failure(error: unknown): unknown;
}

export function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
