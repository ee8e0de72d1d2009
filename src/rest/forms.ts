import { z } from 'zod';
import { findUnsafeInput, jsonTextTooDeep, TOO_DEEP_MESSAGE } from '../services/input-safety.js';

// Form bodies (urlencoded, multipart) carry every value as text; these read such text back into the
// value a JSON body would carry.

/**
 * Form bodies carry lists and objects as JSON text; JSON bodies carry them as they are. The text is
 * held to what the router holds a whole body to, since the router only saw it as a string.
 */
export const fromJsonText = <S extends z.ZodType>(schema: S) =>
  z.preprocess((value, ctx) => {
    if (typeof value !== 'string' || !/^\s*[[{]/.test(value)) return value;
    if (jsonTextTooDeep(value)) {
      ctx.addIssue({ code: 'custom', message: TOO_DEEP_MESSAGE });
      return z.NEVER;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'Value must be valid JSON.' });
      return z.NEVER;
    }
    const unsafe = findUnsafeInput(parsed);
    if (unsafe) {
      ctx.addIssue({ code: 'custom', message: unsafe.message, path: unsafe.path });
      return z.NEVER;
    }
    return parsed;
  }, schema);
