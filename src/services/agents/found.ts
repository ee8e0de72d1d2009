import { NotFoundError } from '../errors.js';
import { uuid } from '../validation.js';

/**
 * What `read` finds for `id`, or a NotFoundError: a malformed id, a missing row and another user's row
 * all look the same to the caller (404, never 403). A malformed id never reaches the database.
 */
export async function foundOr404<T>(resource: string, id: string, read: (id: string) => Promise<T | null | undefined>): Promise<T> {
  const found = uuid.safeParse(id).success ? await read(id) : null;
  if (found === null || found === undefined) throw new NotFoundError(resource);
  return found;
}
