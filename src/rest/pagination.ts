import { z } from 'zod';
import { describedAs } from '../services/validation.js';

// v1 pagination: `limit` (default 50, clamped to 500) and a zero-based `offset`.

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;

// Read from the query's text, and documented as the integer it stands for, which typed clients pass.
const whole = (min: number) =>
  describedAs(
    z
      .string()
      .regex(/^\s*-?\d+\s*$/, { error: 'A valid integer is required.' })
      .transform(Number)
      .pipe(z.number().min(min, { error: `Ensure this value is greater than or equal to ${min}.` })),
    { type: 'integer', minimum: min },
  );

export const paginationQuery = z.object({
  limit: whole(1)
    .transform((n) => Math.min(n, MAX_LIMIT))
    .default(DEFAULT_LIMIT)
    .describe(`Maximum number of rows to return (default ${DEFAULT_LIMIT}; values above ${MAX_LIMIT} count as ${MAX_LIMIT}).`),
  // Bounded so that the database is never handed an offset it cannot read (a 500 before).
  offset: whole(0).pipe(z.number().max(Number.MAX_SAFE_INTEGER)).default(0).describe('Zero-based offset of the first row.'),
});

export type Pagination = z.output<typeof paginationQuery>;
