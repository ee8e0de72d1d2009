import { z } from 'zod';

// Form bodies (urlencoded, multipart) carry every value as text; these read such text back into the
// value a JSON body would carry.

/** Form bodies carry lists and objects as JSON text; JSON bodies carry them as they are. */
export const fromJsonText = <S extends z.ZodType>(schema: S) =>
  z.preprocess((value, ctx) => {
    if (typeof value !== 'string' || !/^\s*[[{]/.test(value)) return value;
    try {
      return JSON.parse(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'Value must be valid JSON.' });
      return z.NEVER;
    }
  }, schema);
