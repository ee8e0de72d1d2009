import type { CombinedError } from '@urql/core';

/** A refusal as the API gave it: its code, its message and, for bad input, each field's problem. */
export function ErrorNote({ error }: { error: CombinedError | undefined }) {
  if (!error) return null;
  const items = error.graphQLErrors.length
    ? error.graphQLErrors.map((e) => {
        const code = e.extensions['code'] as string | undefined;
        const fields = e.extensions['fieldErrors'] as Record<string, string[]> | undefined;
        return { code, message: e.message, fields: fields ? Object.entries(fields) : [] };
      })
    : [{ code: 'NETWORK', message: error.networkError?.message ?? error.message, fields: [] }];
  return (
    <div role="alert" className="error">
      {items.map((item, index) => (
        <div key={index}>
          <p>
            {item.code ? <code>{item.code}</code> : null} {item.message}
          </p>
          {item.fields.length ? (
            <ul>
              {item.fields.map(([field, messages]) => (
                <li key={field}>
                  <code>{field}</code>: {messages.join(' ')}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ))}
    </div>
  );
}
