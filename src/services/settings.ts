/** Tunables the service layer reads; src/config.ts fills them from the environment. */
export interface Settings {
  /** Most rows one contact import may carry. */
  importMaxRows: number;
}

export const defaultSettings: Settings = {
  importMaxRows: 100_000,
};
