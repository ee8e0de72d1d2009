import { NON_FIELD, type FieldErrors } from '../services/errors.js';
import { camelCase } from '../key-case.js';

// The service layer names every input field in snake_case, as most v1 bodies do. The few v1 endpoints
// whose contract takes camelCase bodies (the import: `groupName`, `csvData`) pass their body through
// snakeKeys (src/key-case.ts); their field errors are named back here, by rule: the first
// segment only, since the rest of a path (a CSV row's columns) is the client's own data.

/** `csv_data.3.Phone` -> `csvData.3.Phone`: the first segment of each path, as the body named it. */
export function camelCaseFields(errors: FieldErrors): FieldErrors {
  const out: FieldErrors = {};
  for (const [path, messages] of Object.entries(errors)) {
    const [head, ...rest] = path.split('.');
    (out[head === NON_FIELD ? path : [camelCase(head!), ...rest].join('.')] ??= []).push(...messages);
  }
  return out;
}
