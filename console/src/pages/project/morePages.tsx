import { Anchor, Breadcrumbs, Stack } from '@mantine/core';
import { IconChartBar, IconListDetails, IconWebhook, IconWorldWww } from '@tabler/icons-react';
import type React from 'react';
import { hrefOf } from '../../route.ts';
import { ProxiesPage } from './Proxies.tsx';
import { RunsOverviewPage } from './RunsOverview.tsx';
import { UsagePage } from './Usage.tsx';
import { WebhooksPage } from './Webhooks.tsx';

/**
 * A project's pages beyond its tabs: what only the API could do before (issue 37). The console's
 * shell lists every entry in its navigation and routes `#/projects/{project}/more/{key}` to it.
 */
export type MorePage = {
  key: string;
  label: string;
  icon: React.ComponentType<{ size?: number }>;
  element: (props: { project: string }) => React.ReactNode;
};

export const morePages: MorePage[] = [
  { key: 'webhooks', label: 'Webhooks', icon: IconWebhook, element: WebhooksPage },
  { key: 'proxies', label: 'Proxies', icon: IconWorldWww, element: ProxiesPage },
  { key: 'runs', label: 'Runs', icon: IconListDetails, element: RunsOverviewPage },
  { key: 'usage', label: 'Usage', icon: IconChartBar, element: UsagePage },
];

/** Where a `morePages` entry is reached. */
export const hrefOfMore = (project: string, key: string) => `#/projects/${encodeURIComponent(project)}/more/${encodeURIComponent(key)}`;

/** A link colour readable on either scheme's background (the blue's darkest shade on light, lightest on dark). */
const linkColor = 'var(--mantine-color-blue-light-color)';

/** One entry's page, under a trail back to its project (or a note when no entry has that key). */
export function MorePageView({ project, pageKey }: { project: string; pageKey: string }) {
  const page = morePages.find((entry) => entry.key === pageKey);
  return (
    <Stack>
      <Breadcrumbs>
        <Anchor href={hrefOf({ page: 'projects' })} c={linkColor} underline="always">
          Projects
        </Anchor>
        <Anchor href={hrefOf({ page: 'project', slug: project, tab: 'sessions' })} c={linkColor} underline="always">
          {project}
        </Anchor>
        <span>{page?.label ?? 'Not found'}</span>
      </Breadcrumbs>
      {page ? page.element({ project }) : <p>There is no page “{pageKey}” in this console.</p>}
    </Stack>
  );
}
