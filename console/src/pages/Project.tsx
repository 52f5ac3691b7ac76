import { Badge, Code, Group, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Loaded } from '../components/parts.tsx';
import type { ProjectTab } from '../route.ts';
import { trpc } from '../trpc.ts';
import { FunctionsTab } from './project/Functions.tsx';
import { PipelinesTab } from './project/Pipelines.tsx';
import { SessionsTab } from './project/Sessions.tsx';
import { ProjectSettings } from './project/Settings.tsx';

/** A project: what it is, and one of its sections (sessions, pipelines, functions, settings), chosen in the sidebar. */
export function ProjectPage({ slug, tab }: { slug: string; tab: ProjectTab }) {
  const project = useQuery(trpc.projects.get.queryOptions({ project: slug }));
  return (
    <Loaded query={project}>
      {(data) => (
        <>
          <Title order={1} size="h2">
            {data.name}
          </Title>
          <Group gap="xs" mb="md" mt={4}>
            <Code>{data.slug}</Code>
            <Badge variant="dot" color={data.visibility === 'public' ? 'green' : 'gray'}>
              {data.visibility}
            </Badge>
            {data.description && (
              <Text size="sm" c="dimmed">
                {data.description}
              </Text>
            )}
          </Group>
          {tab === 'sessions' && <SessionsTab slug={slug} />}
          {tab === 'pipelines' && <PipelinesTab slug={slug} />}
          {tab === 'functions' && <FunctionsTab slug={slug} />}
          {tab === 'settings' && <ProjectSettings key={data.slug} project={data} />}
        </>
      )}
    </Loaded>
  );
}
