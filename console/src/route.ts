import { useEffect, useState } from 'react';

/**
 * The console's routes live in the URL's fragment (`/#/projects/shop/pipelines`): the service's
 * own paths start with a project slug (`/{project}/api/…`), so a console path could never be told
 * apart from one of them on the server. The fragment never reaches the server.
 */
export type ProjectTab = 'sessions' | 'pipelines' | 'functions' | 'settings';
export type Route =
  | { page: 'projects' }
  | { page: 'keys' }
  | { page: 'hosts' }
  | { page: 'account' }
  | { page: 'billing'; back?: string }
  | { page: 'project'; slug: string; tab: ProjectTab }
  | { page: 'pipeline'; slug: string; pipelineId: string }
  | { page: 'run'; slug: string; pipelineId: string; runId: string }
  | { page: 'analysis'; slug: string; pipelineId: string; analysisId: string }
  | { page: 'generation'; slug: string; pipelineId: string; generationId: string }
  /** A project's page listed in `morePages` (console/src/pages/project/morePages.tsx), by its key. */
  | { page: 'more'; slug: string; key: string };

const tabs: ProjectTab[] = ['sessions', 'pipelines', 'functions', 'settings'];

export function parseRoute(hash: string): Route {
  const [first, slug, second, pipelineId, third, runId] = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (first === 'keys') return { page: 'keys' };
  if (first === 'hosts') return { page: 'hosts' };
  if (first === 'account') return { page: 'account' };
  if (first === 'billing') return { page: 'billing', back: slug };
  if (first !== 'projects' || !slug) return { page: 'projects' };
  if (second === 'more' && pipelineId) return { page: 'more', slug, key: pipelineId };
  if (second === 'pipelines' && pipelineId) {
    if (third === 'runs' && runId) return { page: 'run', slug, pipelineId, runId };
    if (third === 'analysis' && runId) return { page: 'analysis', slug, pipelineId, analysisId: runId };
    if (third === 'generation' && runId) return { page: 'generation', slug, pipelineId, generationId: runId };
    return { page: 'pipeline', slug, pipelineId };
  }
  return { page: 'project', slug, tab: tabs.find((tab) => tab === second) ?? 'sessions' };
}

export function hrefOf(route: Route): string {
  const part = encodeURIComponent;
  switch (route.page) {
    case 'projects':
      return '#/projects';
    case 'keys':
      return '#/keys';
    case 'hosts':
      return '#/hosts';
    case 'account':
      return '#/account';
    case 'billing':
      return route.back ? `#/billing/${part(route.back)}` : '#/billing';
    case 'project':
      return `#/projects/${part(route.slug)}${route.tab === 'sessions' ? '' : `/${route.tab}`}`;
    case 'pipeline':
      return `#/projects/${part(route.slug)}/pipelines/${part(route.pipelineId)}`;
    case 'run':
      return `#/projects/${part(route.slug)}/pipelines/${part(route.pipelineId)}/runs/${part(route.runId)}`;
    case 'analysis':
      return `#/projects/${part(route.slug)}/pipelines/${part(route.pipelineId)}/analysis/${part(route.analysisId)}`;
    case 'generation':
      return `#/projects/${part(route.slug)}/pipelines/${part(route.pipelineId)}/generation/${part(route.generationId)}`;
    case 'more':
      return `#/projects/${part(route.slug)}/more/${part(route.key)}`;
  }
}

export function useRoute() {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return route;
}
