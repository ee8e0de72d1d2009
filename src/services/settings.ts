/** Tunables the service layer reads; src/config.ts fills them from the environment. */
export interface Settings {
  /** Most rows one contact import may carry. */
  importMaxRows: number;
  /** Price of a call minute; calls are billed per second, rounded up to a whole cent. */
  callRateCentsPerMinute: number;
  webhooks: {
    /** Whether endpoints may be on addresses that are not globally routable: loopback, private, ... (development and tests only). */
    allowPrivateUrls: boolean;
  };
}

export const defaultSettings: Settings = {
  importMaxRows: 100_000,
  callRateCentsPerMinute: 10,
  webhooks: { allowPrivateUrls: false },
};
