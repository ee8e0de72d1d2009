// `{{ name }}` placeholders, as agent templates and voicemail messages write them.

/** Fills `{{ name }}` placeholders from `values`; an unknown one becomes empty, an object its JSON. */
export function fillPlaceholders(template: string, values: Record<string, unknown>): string {
  return template.replace(/\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g, (_, key: string) => {
    const value = values[key];
    if (value === undefined || value === null) return '';
    return typeof value === 'object' ? JSON.stringify(value) : String(value);
  });
}
