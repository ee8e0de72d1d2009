/**
 * Headers in the order node-server writes a Fetch Response's: the Fetch API's Headers iterate lower-case
 * names sorted. The lean lanes write their answers themselves, with the full path's headers in its order.
 */
export function inFetchOrder(headers: Map<string, string>): Record<string, string> {
  return Object.fromEntries([...headers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
