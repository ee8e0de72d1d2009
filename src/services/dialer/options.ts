// How a dialer behaves, and the defaults the configuration starts from: a module of its own, so that
// reading the configuration does not load the dialer.

export interface DialerOptions {
  /** How long a call may hold its slot without reporting back before it counts as failed. */
  leaseSeconds: number;
  /** The circuit breaker looks at this many most recent finished calls of a campaign... */
  breakerWindow: number;
  /** ...and pauses it when at least this share of them failed. */
  breakerThreshold: number;
  /**
   * The most calls one tick claims. A busy campaign's free slots are then taken by several ticks, which
   * the workers sharing it run side by side, instead of all by whichever tick comes first.
   */
  callsPerTick: number;
  /** Ticks one process runs at once, taking turns by customer (turns.ts). */
  ticksAtOnce: number;
}

export const DEFAULT_DIALER_OPTIONS: DialerOptions = {
  leaseSeconds: 300,
  breakerWindow: 20,
  breakerThreshold: 0.8,
  callsPerTick: 50,
  ticksAtOnce: 4,
};

/**
 * Asks for a tick of the campaign now, or at `at`; `hereOnly`: in this process, since what it frees
 * (a slot only this process knows to be free) is no use to others.
 */
export type Wake = (campaignId: string, at?: Date, hereOnly?: boolean) => void;
