import type * as StripeLibrary from 'stripe';

// Stripe's library (0.7 MB of code, some 50 ms to load) loads on first use, as the holiday library does:
// a start does not wait for it, and a server that sells no credits never loads it.
let library: Promise<typeof StripeLibrary> | undefined;

export function loadStripe(): Promise<typeof StripeLibrary> {
  library ??= import('stripe');
  return library;
}
