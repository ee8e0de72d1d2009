// The order in which one dialer process ticks its campaigns. A tick is one claim of a campaign's free
// slots (at most `callsPerTick`); a campaign with more to do asks again. At most `atOnce` ticks run at
// a time, so that one customer's campaigns cannot take every connection of the process's pool. Ticks
// wait in a queue per customer and the customers take turns: the next tick to start is the first
// waiting campaign of the customer served least recently, however many campaigns each customer has
// waiting. And no customer runs more than `atOnce - 1` ticks at once, so that one lane stays open to the
// others: a small customer's freed slot starts its tick at once beside a big customer's, instead of
// waiting for one of the big one's ticks to end.

export interface TickTurnsOptions<Cause> {
  /** Ticks running at once in this process. */
  atOnce: number;
  /** Runs one tick of the campaign; `cause`: what the first ask since its last tick came with. */
  tick: (campaignId: string, cause: Cause | undefined) => Promise<void>;
  /** The customer a campaign belongs to, once known (a campaign not yet known is a customer of its own). */
  customerOf: (campaignId: string) => string | undefined;
  onError: (error: unknown, campaignId: string) => void;
}

interface Running {
  customer: string;
  /** Asked for again while it ticks. */
  again: boolean;
}

export class TickTurns<Cause = never> {
  /** Waiting campaigns by customer, the customers in the order of their turns. */
  private readonly waiting = new Map<string, string[]>();
  /** The campaigns waiting, with the cause of their first ask. */
  private readonly queued = new Map<string, Cause | undefined>();
  private readonly running = new Map<string, Running>();
  /** Ticks running, by customer. */
  private readonly runningOf = new Map<string, number>();
  /** When each customer with work here was last given a tick (a count of ticks given). */
  private readonly served = new Map<string, number>();
  private given = 0;
  private readonly ticks = new Set<Promise<void>>();
  private readonly perCustomer: number;
  private stopped = false;

  constructor(private readonly options: TickTurnsOptions<Cause>) {
    this.perCustomer = Math.max(1, options.atOnce - 1);
  }

  /** Asks for a tick of the campaign: queued once; asked while it ticks, it waits for a turn after that tick. */
  ask(campaignId: string, cause?: Cause): void {
    if (this.stopped) return;
    const running = this.running.get(campaignId);
    if (running) {
      running.again = true;
      return;
    }
    if (this.queued.has(campaignId)) return;
    this.enqueue(campaignId, cause);
    this.pump();
  }

  /** Campaigns ticking or waiting here. */
  campaigns(): string[] {
    return [...new Set([...this.running.keys(), ...this.queued.keys()])];
  }

  /** Takes no more asks and forgets the waiting ones; resolves once the ticks under way have finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.waiting.clear();
    this.queued.clear();
    this.served.clear();
    while (this.ticks.size) await Promise.all(this.ticks);
  }

  private enqueue(campaignId: string, cause: Cause | undefined): void {
    const customer = this.options.customerOf(campaignId) ?? campaignId;
    const line = this.waiting.get(customer);
    if (line) line.push(campaignId);
    else this.waiting.set(customer, [campaignId]);
    this.queued.set(campaignId, cause);
  }

  /**
   * The first waiting campaign of the customer served least recently (one not served yet first) among
   * those that may run one more tick.
   */
  private next(): { campaignId: string; customer: string; cause: Cause | undefined } | undefined {
    let chosen: string | undefined;
    for (const customer of this.waiting.keys()) {
      if ((this.runningOf.get(customer) ?? 0) >= this.perCustomer) continue;
      if (chosen === undefined || (this.served.get(customer) ?? -1) < (this.served.get(chosen) ?? -1)) chosen = customer;
    }
    if (chosen === undefined) return undefined;
    const line = this.waiting.get(chosen)!;
    const campaignId = line.shift()!;
    if (line.length === 0) this.waiting.delete(chosen);
    this.served.set(chosen, (this.given += 1));
    const cause = this.queued.get(campaignId);
    this.queued.delete(campaignId);
    return { campaignId, customer: chosen, cause };
  }

  private pump(): void {
    while (!this.stopped && this.running.size < this.options.atOnce) {
      const turn = this.next();
      if (!turn) return;
      const { campaignId, customer, cause } = turn;
      this.running.set(campaignId, { customer, again: false });
      this.runningOf.set(customer, (this.runningOf.get(customer) ?? 0) + 1);
      const tick = this.options
        .tick(campaignId, cause)
        .catch((error: unknown) => this.options.onError(error, campaignId))
        .finally(() => {
          const { again } = this.running.get(campaignId)!;
          this.running.delete(campaignId);
          const left = this.runningOf.get(customer)! - 1;
          if (left) this.runningOf.set(customer, left);
          else this.runningOf.delete(customer);
          // A customer with nothing here is forgotten: when it comes back, it has not been served yet.
          if (!left && !this.waiting.has(customer) && !again) this.served.delete(customer);
          this.ticks.delete(tick);
          if (again && !this.stopped) this.enqueue(campaignId, undefined);
          this.pump();
        });
      this.ticks.add(tick);
    }
  }
}
