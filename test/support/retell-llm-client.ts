import WebSocket from 'ws';

// Retell's side of its LLM WebSocket protocol: it opens `{llm_websocket_url}/{call_id}`, reads our config
// and begin message, sends the transcript as the call goes (`update_only`), asks for answers
// (`response_required`, `reminder_required`) and reads the streamed `response` frames, tool call frames
// and `ping_pong`s.

export type Frame = Record<string, any> & { response_type: string };
export type Utterance = { role: 'agent' | 'user'; content: string };

export class RetellLlmClient {
  readonly frames: Frame[] = [];
  /** When each frame arrived (performance.now()), in the order of `frames`. */
  readonly arrivals: number[] = [];
  private waiters: (() => void)[] = [];
  closed: { code: number; reason: string } | undefined;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.arrivals.push(performance.now());
      this.frames.push(JSON.parse(String(data)) as Frame);
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
  }

  /** Opens the socket; rejects with the HTTP status when the upgrade is refused. */
  static connect(url: string): Promise<RetellLlmClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      const client = new RetellLlmClient(ws);
      ws.once('open', () => resolve(client));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => reject(new RefusedUpgrade(res.statusCode ?? 0, body)));
      });
      ws.once('error', reject);
    });
  }

  send(frame: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(frame));
  }

  /** The first frame from `from` on that `match` accepts, waiting for it. */
  async next(match: (frame: Frame) => boolean, from = 0, timeoutMs = 20_000): Promise<{ frame: Frame; index: number }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.frames.findIndex((frame, i) => i >= from && match(frame));
      if (index >= 0) return { frame: this.frames[index]!, index };
      if (this.closed) throw new Error(`socket closed (${this.closed.code}) before the frame came; got ${JSON.stringify(this.frames)}`);
      if (Date.now() > deadline) throw new Error(`no such frame within ${timeoutMs} ms; got ${JSON.stringify(this.frames)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Asks for a response and waits for its last frame; returns its frames in order and the text they say. */
  async respond(responseId: number, transcript: Utterance[], kind: 'response_required' | 'reminder_required' = 'response_required') {
    const from = this.frames.length;
    this.send({ interaction_type: kind, response_id: responseId, transcript });
    const { index } = await this.next((f) => f.response_type === 'response' && f.response_id === responseId && f.content_complete, from);
    const frames = this.frames.slice(from, index + 1);
    const said = frames.filter((f) => f.response_type === 'response' && f.response_id === responseId);
    return { frames, content: said.map((f) => f.content as string).join(''), last: frames[frames.length - 1]! };
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close(1000);
    });
  }

  private wake() {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

export class RefusedUpgrade extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`upgrade refused with ${status}: ${body}`);
  }
}
