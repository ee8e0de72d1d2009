import { useMemo, useState } from 'react';
import { Provider } from 'urql';
import { createGraphQLClient } from './client';
import { go, useRoute } from './router';
import { session } from './session';
import type { ConsoleSettings } from './settings';
import { Login } from './pages/Login';
import { Campaigns } from './pages/Campaigns';
import { CampaignPage } from './pages/CampaignPage';
import { NewCampaign } from './pages/NewCampaign';
import { Contacts } from './pages/Contacts';
import { ImportContacts } from './pages/ImportContacts';
import { GroupPage } from './pages/GroupPage';
import { ContactPage } from './pages/ContactPage';
import { Agents } from './pages/Agents';
import { NewAgent } from './pages/NewAgent';
import { Billing } from './pages/Billing';

const SECTIONS = [
  ['campaigns', 'Campaigns'],
  ['contacts', 'Contacts'],
  ['agents', 'Agents'],
  ['billing', 'Billing'],
] as const;

export function App({ settings }: { settings: ConsoleSettings }) {
  const [token, setToken] = useState(session.token);
  const [expired, setExpired] = useState(false);
  const route = useRoute();
  const client = useMemo(
    () =>
      token
        ? createGraphQLClient(settings, token, () => {
            session.logOut();
            setExpired(true);
            setToken(null);
          })
        : null,
    [settings, token],
  );

  if (!client) {
    return (
      <Login
        demoToken={settings.demoToken}
        expired={expired}
        onLogIn={(value) => {
          session.logIn(value);
          setExpired(false);
          setToken(value);
          if (!route.length) go('/campaigns');
        }}
      />
    );
  }
  const section = route[0] ?? 'campaigns';
  return (
    <Provider value={client}>
      <a className="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Callflow</span>
        <nav aria-label="Sections">
          <ul>
            {SECTIONS.map(([path, label]) => (
              <li key={path}>
                <a href={`#/${path}`} aria-current={section === path ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            session.logOut();
            setToken(null);
          }}
        >
          Log out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Page route={route} />
      </main>
    </Provider>
  );
}

function Page({ route }: { route: string[] }) {
  const [section = 'campaigns', id] = route;
  switch (section) {
    case 'campaigns':
      if (id === 'new') return <NewCampaign />;
      return id ? <CampaignPage key={id} id={id} /> : <Campaigns />;
    case 'contacts':
      if (id === 'import') return <ImportContacts />;
      return id ? <ContactPage key={id} id={id} /> : <Contacts />;
    case 'groups':
      return id ? <GroupPage key={id} id={id} /> : <Contacts />;
    case 'agents':
      return id === 'new' ? <NewAgent templateId={route[2]} /> : <Agents />;
    case 'billing':
      return <Billing />;
    default:
      return <h1>Not found</h1>;
  }
}
