import { createRequire } from 'node:module';
import type Holidays from 'date-holidays';

// The holiday library's data of every country is some 8 MB of heap (20 MB of a process's memory) once
// loaded, and only a few calling-rule checks read it: holiday calendars, and the zones of a country the
// area-code table lacks. It loads on the first of those, from its CommonJS build so that the checks stay
// synchronous, instead of at every start.

let library: typeof Holidays | undefined;

/** The date-holidays class, loaded on first use. */
export function holidayLibrary(): typeof Holidays {
  library ??= createRequire(import.meta.url)('date-holidays') as typeof Holidays;
  return library;
}
