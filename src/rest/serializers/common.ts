import { z } from 'zod';

// Building blocks of v1 response shapes. `json` fields are open in the contract, so they are `unknown`.

export const id = z.guid();
export const datetime = z.iso.datetime({ offset: true });
export const json = z.unknown();

/** v1 timestamps are ISO 8601 strings in UTC; a store that builds its rows as JSON already gives them so. */
export const iso = (date: Date | string) => (typeof date === 'string' ? date : date.toISOString());
export const isoOrNull = (date: Date | string | null) => (date === null ? null : iso(date));

/** Each batch of `batches` mapped to its v1 shape, for an export. */
export async function* mapBatches<T, R>(batches: AsyncIterable<T[]>, toV1: (item: T) => R): AsyncGenerator<R[]> {
  for await (const batch of batches) yield batch.map(toV1);
}
