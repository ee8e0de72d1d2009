import { useState, type FormEvent } from 'react';

/** A token (JWT) or an API key (cfk_...), kept for this tab only. */
export function Login({ demoToken, expired, onLogIn }: { demoToken: string | null; expired: boolean; onLogIn: (token: string) => void }) {
  const [value, setValue] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const token = value.trim().replace(/^Bearer\s+/i, '');
    if (token) onLogIn(token);
  };
  return (
    <main id="main" className="login">
      <h1>Callflow console</h1>
      {expired ? (
        <p role="alert" className="error">
          The API refused the token (expired or revoked): log in again.
        </p>
      ) : null}
      <form onSubmit={submit}>
        <label htmlFor="token">Token or API key</label>
        <textarea
          id="token"
          rows={4}
          value={value}
          onChange={(e) => setValue(e.target.value)}
          required
          autoComplete="off"
          spellCheck={false}
        />
        <p className="hint">Kept in this tab only (sessionStorage): closing the tab logs you out.</p>
        <div className="actions">
          <button type="submit">Log in</button>
          {demoToken ? (
            <button type="button" className="secondary" onClick={() => onLogIn(demoToken)}>
              Use the demo token
            </button>
          ) : null}
        </div>
      </form>
    </main>
  );
}
