import { IconChartBar, IconListDetails, IconWebhook, IconWorldWww } from '@tabler/icons-react';
import type React from 'react';
import { ProxiesPage } from './Proxies.tsx';
import { RunsOverviewPage } from './RunsOverview.tsx';
import { UsagePage } from './Usage.tsx';
import { WebhooksPage } from './Webhooks.tsx';

/**
 * A project's pages beyond its built-in sections: what only the API could do before (issue 37).
 * The console's shell (Shell.tsx) lists every entry in its sidebar, and App.tsx routes
 * `#/projects/{project}/more/{key}` to it inside the project's scope.
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
