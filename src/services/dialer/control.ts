import type { CallResult } from '../voice/providers/telephony.js';

/**
 * What the rest of the service needs from the dialer: a nudge when a campaign starts or resumes, so calls
 * begin at once instead of at the dialer's next sweep, and a provider's result to apply now (a webhook
 * has already stored it on the attempt, so nothing is lost if it is not). Without a dialer (tests of the
 * API alone, or an API process with DIALER=off) both are no-ops; the dialers' periodic sweeps find
 * running campaigns and stored results on their own.
 */
export interface DialerControl {
  /** `requestId`: the request that started the campaign, for the dialer's log lines. */
  wake(campaignId: string, cause?: { requestId?: string | undefined }): Promise<void>;
  report(result: CallResult): void;
}

export const idleDialer: DialerControl = { wake: async () => {}, report: () => {} };
