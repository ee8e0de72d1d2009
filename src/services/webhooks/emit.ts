import type { SqlSession } from '../../db/sql.js';
import type { OutgoingEvent } from './events.js';
import * as store from './store.js';

/**
 * Sends events to the customers' endpoints: call it inside the transaction that made them, so that an
 * event exists exactly when its change committed. Costs one statement, and nothing is kept for a user
 * without an endpoint that takes the event.
 */
export function emitEvents(session: SqlSession, events: OutgoingEvent[]): Promise<number> {
  return store.emit(session, events);
}
