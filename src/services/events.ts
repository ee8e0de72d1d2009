import type { Logger } from 'pino';

// Live updates. Services announce what changed, by id only, once their transaction has committed;
// GraphQL subscriptions listen per campaign and read the current rows themselves, with the subscriber's
// tenancy check, so an event carries nothing that its reader could not read anyway.

/** What changed in one campaign. */
export type CampaignEvent =
  /** Its status, or the progress of its contacts. */
  | { kind: 'campaign'; campaignId: string }
  /** These call attempts were created or changed (placed, finished), and the campaign's progress with them. */
  | { kind: 'attempts'; campaignId: string; attemptIds: string[] };

export type CampaignListener = (event: CampaignEvent) => void;

/**
 * The event bus port: in this process by default, through Redis pub/sub across processes
 * (src/ops/event-bus.ts).
 */
export interface EventBus {
  /**
   * Announces a change; call it after the transaction that made it committed. Never throws and never
   * waits: a lost event costs a subscriber one update, and publishing must never cost a call.
   */
  publish(event: CampaignEvent): void;
  /** Calls `listener` with every later event of the campaign; resolves once listening, with the function that stops. */
  listen(campaignId: string, listener: CampaignListener): Promise<() => void>;
  close(): Promise<void>;
}

/** The listeners of each campaign in this process, for both transports. */
export class CampaignListeners {
  readonly #byCampaign = new Map<string, Set<CampaignListener>>();

  constructor(private readonly log: Logger) {}

  /** Returns true for the campaign's first listener. */
  add(campaignId: string, listener: CampaignListener): boolean {
    const listeners = this.#byCampaign.get(campaignId);
    if (listeners) {
      listeners.add(listener);
      return false;
    }
    this.#byCampaign.set(campaignId, new Set([listener]));
    return true;
  }

  /** Returns true when the campaign's last listener left. */
  remove(campaignId: string, listener: CampaignListener): boolean {
    const listeners = this.#byCampaign.get(campaignId);
    if (!listeners?.delete(listener) || listeners.size > 0) return false;
    this.#byCampaign.delete(campaignId);
    return true;
  }

  /** The campaigns listened to. */
  campaigns(): string[] {
    return [...this.#byCampaign.keys()];
  }

  deliver(event: CampaignEvent): void {
    for (const listener of this.#byCampaign.get(event.campaignId) ?? []) {
      try {
        listener(event);
      } catch (err) {
        this.log.error({ err, campaignId: event.campaignId }, 'a live update listener failed');
      }
    }
  }
}

/** The bus of one process: what it publishes reaches its own subscribers only. */
export function inProcessEventBus(log: Logger): EventBus {
  const listeners = new CampaignListeners(log);
  return {
    publish: (event) => listeners.deliver(event),
    async listen(campaignId, listener) {
      listeners.add(campaignId, listener);
      return () => void listeners.remove(campaignId, listener);
    },
    async close() {},
  };
}
