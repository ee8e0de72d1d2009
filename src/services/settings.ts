import type { CheckoutSettings } from './billing/checkout.js';

/** Tunables the service layer reads; src/config.ts fills them from the environment. */
export interface Settings {
  /** Most rows one contact import may carry. */
  importMaxRows: number;
  /** Price of a call minute; calls are billed per second, rounded up to a whole cent. */
  callRateCentsPerMinute: number;
  /**
   * Call minutes held from the balance for each call in flight: what the next call needs (callHoldCents),
   * for dispatch and the dialer alike.
   */
  callHoldMinutes: number;
  /** Stripe Checkout for buying credits; unset, createCreditCheckout is refused as unavailable. */
  checkout?: CheckoutSettings | undefined;
  /**
   * Days the log of what is sent to customers' endpoints (webhook events and their deliveries) is kept:
   * a month of it is dropped once all of it is older, and none of its deliveries is still pending.
   */
  webhookLogRetentionDays: number;
  webhooks: {
    /** Whether endpoints may be on addresses that are not globally routable: loopback, private, ... (development and tests only). */
    allowPrivateUrls: boolean;
  };
}

export const defaultSettings: Settings = {
  importMaxRows: 100_000,
  callRateCentsPerMinute: 10,
  callHoldMinutes: 5,
  webhookLogRetentionDays: 90,
  webhooks: { allowPrivateUrls: false },
};
