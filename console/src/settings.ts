/** What the server tells its console (GET /console/config.json). */
export interface ConsoleSettings {
  /** The API runs trusted documents only: send each operation's hash instead of its text. */
  trustedDocuments: boolean;
  /** Development's demo token, offered on the login form. */
  demoToken: string | null;
}

export async function loadSettings(): Promise<ConsoleSettings> {
  const response = await fetch('config.json', { cache: 'no-store' });
  if (!response.ok) throw new Error(`The console's settings did not load (${response.status}).`);
  return (await response.json()) as ConsoleSettings;
}
