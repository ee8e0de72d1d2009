/**
 * What the campaign service needs from the dialer: a nudge when a campaign starts or resumes, so calls
 * begin at once instead of at the dialer's next sweep. Without a dialer (tests of the API alone) it is
 * a no-op; the dialer's periodic sweep also finds running campaigns on its own.
 */
export interface DialerControl {
  /** `requestId`: the request that started the campaign, for the dialer's log lines. */
  wake(campaignId: string, cause?: { requestId?: string | undefined }): Promise<void>;
}

export const idleDialer: DialerControl = { wake: async () => {} };
