import { useEffect, useState } from 'react';

/**
 * The console's routes live in the URL's fragment (`/#/projects/shop`): the service's own paths
 * start with a project slug (`/{project}/api/…`), so a console path could never be told apart from
 * one of them on the server. The fragment never reaches the server.
 */
export type Route = { page: 'projects' } | { page: 'project'; slug: string } | { page: 'keys' };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'projects' && parts[1]) return { page: 'project', slug: parts[1] };
  if (parts[0] === 'keys') return { page: 'keys' };
  return { page: 'projects' };
}

export const hrefOf = (route: Route) =>
  route.page === 'project' ? `#/projects/${encodeURIComponent(route.slug)}` : route.page === 'keys' ? '#/keys' : '#/projects';

export function useRoute() {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return route;
}
