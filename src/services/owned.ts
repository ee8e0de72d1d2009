import { found, NotFoundError } from './errors.js';
import { uuid } from './validation.js';

// Another user's resource does not exist for you: a malformed id, a missing row and someone else's row all
// answer the same 404. Every lookup by id goes through here, so they cannot drift apart.

/**
 * The caller's `resource` with this id, as `find` (a store read scoped to the caller) answers it; a 404
 * without asking the database when the id is no UUID.
 */
export async function ownedOrNotFound<T>(resource: string, id: string, find: (id: string) => Promise<T | null | undefined>): Promise<T> {
  if (!uuid.safeParse(id).success) throw new NotFoundError(resource);
  return found(await find(id), resource);
}
