/** GraphQL lets a client send null for an optional input field; for our inputs it means "not given". */
export function withoutNulls<T extends Record<string, unknown>>(input: T): { [K in keyof T]: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null)) as { [K in keyof T]: Exclude<T[K], null> };
}
