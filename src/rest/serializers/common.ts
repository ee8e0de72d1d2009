import { z } from 'zod';

// Building blocks of v1 response shapes. `json` fields are open in the contract, so they are `unknown`.

export const id = z.guid();
export const datetime = z.iso.datetime({ offset: true });
export const json = z.unknown();

/** v1 timestamps are ISO 8601 strings in UTC; a store that builds its rows as JSON already gives them so. */
export const iso = (date: Date | string) => (typeof date === 'string' ? date : date.toISOString());
export const isoOrNull = (date: Date | string | null) => (date === null ? null : iso(date));
