import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { loadSettings } from './settings';
import './styles.css';

const root = createRoot(document.getElementById('root')!);
loadSettings().then(
  (settings) =>
    root.render(
      <StrictMode>
        <App settings={settings} />
      </StrictMode>,
    ),
  (error: Error) => root.render(<p role="alert">{error.message}</p>),
);
