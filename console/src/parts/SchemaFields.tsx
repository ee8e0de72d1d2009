// Form fields for a template's placeholders, from its JSON Schema: a text box for a string, a number box
// for an integer or number, a choice for an enum, with the schema's limits, defaults and required marks.
// The server checks the values again against the same schema.

export interface JsonSchema {
  type?: string;
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: (string | number)[];
  default?: string | number | boolean;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
}

const label = (name: string, schema: JsonSchema) => schema.title ?? name.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());

export function SchemaFields({ schema, prefix }: { schema: JsonSchema; prefix: string }) {
  const required = new Set(schema.required ?? []);
  return (
    <>
      {Object.entries(schema.properties ?? {}).map(([name, field]) => {
        const id = `${prefix}${name}`;
        const numeric = field.type === 'integer' || field.type === 'number';
        return (
          <div key={name} className="field">
            <label htmlFor={id}>
              {label(name, field)}
              {required.has(name) ? ' (required)' : null}
            </label>
            {field.enum ? (
              <select id={id} name={id} defaultValue={String(field.default ?? field.enum[0])} data-type={field.type}>
                {field.enum.map((v) => (
                  <option key={String(v)} value={String(v)}>
                    {String(v)}
                  </option>
                ))}
              </select>
            ) : field.type === 'boolean' ? (
              <input id={id} name={id} type="checkbox" defaultChecked={field.default === true} data-type="boolean" />
            ) : (
              <input
                id={id}
                name={id}
                type={numeric ? 'number' : 'text'}
                step={field.type === 'integer' ? 1 : undefined}
                min={field.minimum}
                max={field.maximum}
                minLength={field.minLength}
                maxLength={field.maxLength}
                required={required.has(name)}
                defaultValue={field.default === undefined ? undefined : String(field.default)}
                data-type={field.type}
              />
            )}
            {field.description ? <p className="hint">{field.description}</p> : null}
          </div>
        );
      })}
    </>
  );
}

/** The form's values for the schema's properties, typed as the schema says; empty optional ones left out. */
export function schemaValues(schema: JsonSchema, form: HTMLFormElement, prefix: string): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const element = form.elements.namedItem(`${prefix}${name}`) as HTMLInputElement | HTMLSelectElement | null;
    if (!element) continue;
    if (field.type === 'boolean') values[name] = (element as HTMLInputElement).checked;
    else if (element.value !== '')
      values[name] = field.type === 'integer' || field.type === 'number' ? Number(element.value) : element.value;
  }
  return values;
}
