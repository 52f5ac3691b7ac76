import { useQuery } from '@tanstack/react-query';
import { Loaded } from '../components/parts.tsx';
import { hrefOf, type ProjectTab } from '../route.ts';
import { trpc } from '../trpc.ts';
import { FunctionsTab } from './project/Functions.tsx';
import { hrefOfMore, morePages } from './project/morePages.tsx';
import { PipelinesTab } from './project/Pipelines.tsx';
import { SessionsTab } from './project/Sessions.tsx';
import { ProjectSettings } from './project/Settings.tsx';

/** A project: what it is, and its sessions, pipelines and functions, a tab each. */
export function ProjectPage({ slug, tab }: { slug: string; tab: ProjectTab }) {
  const project = useQuery(trpc.projects.get.queryOptions({ project: slug }));
  return (
    <Loaded query={project}>
      {(data) => (
        <>
          <h1>{data.name}</h1>
          <p className="muted">
            <code>{data.slug}</code> · {data.visibility}
            {data.description ? ` · ${data.description}` : ''}
          </p>
          <nav className="tabs">
            {(['sessions', 'pipelines', 'functions', 'settings'] as const).map((name) => (
              <a key={name} href={hrefOf({ page: 'project', slug, tab: name })} aria-current={tab === name ? 'page' : undefined}>
                {name[0]?.toUpperCase() + name.slice(1)}
              </a>
            ))}
            {/* r37b: the pages of morePages.tsx, until r37a's sidebar lists them */}
            {morePages.map((page) => (
              <a key={page.key} href={hrefOfMore(slug, page.key)}>
                {page.label}
              </a>
            ))}
          </nav>
          {tab === 'sessions' && <SessionsTab slug={slug} />}
          {tab === 'pipelines' && <PipelinesTab slug={slug} />}
          {tab === 'functions' && <FunctionsTab slug={slug} />}
          {tab === 'settings' && <ProjectSettings key={data.slug} project={data} />}
        </>
      )}
    </Loaded>
  );
}
