import { useEffect, useState } from 'react';

// Pages are addressed by the URL's fragment (#/campaigns/<id>): links are ordinary links, the back button
// works, and the server serves one page.

export function useRoute(): string[] {
  const read = () => window.location.hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  const [parts, setParts] = useState(read);
  useEffect(() => {
    const changed = () => setParts(read());
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return parts;
}

export const go = (path: string) => {
  window.location.hash = path;
};
