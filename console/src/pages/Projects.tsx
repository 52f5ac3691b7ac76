import { Anchor, Button, Checkbox, Code, Group, TextInput, Title } from '@mantine/core';
import { IconPlus } from '@tabler/icons-react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { bf } from '../api.ts';
import { DataTable, Empty } from '../components/DataTable.tsx';
import { ErrorLine, fieldError, Loaded, usePagedList, when } from '../components/parts.tsx';
import { hrefOf } from '../route.ts';
import { trpc } from '../trpc.ts';

/** Your projects, and a form that creates one (its slug is the first part of its API paths). */
export function ProjectsPage() {
  const queries = useQueryClient();
  const projects = usePagedList((page) => trpc.projects.list.queryOptions({ my: true, ...page }), 'projects');
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [isPublic, setPublic] = useState(false);
  const create = useMutation({
    mutationFn: () => bf.projects.create.mutate({ name, slug, public: isPublic }),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: trpc.projects.list.queryKey() });
      window.location.hash = hrefOf({ page: 'project', slug, tab: 'sessions' });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <>
      <Title order={1} size="h2" mb="md">
        Projects
      </Title>
      <Loaded query={projects}>
        {(rows) =>
          rows.length === 0 ? (
            <Empty
              title="No projects yet"
              text="A project holds sessions, pipelines and functions. Create the first with the form below."
            />
          ) : (
            <DataTable
              label="projects"
              rows={rows}
              rowKey={(project) => project.id}
              filterBy={(project) => `${project.name} ${project.slug}`}
              columns={[
                {
                  key: 'name',
                  label: 'Name',
                  sortBy: (project) => project.name,
                  render: (project) => (
                    <Anchor href={hrefOf({ page: 'project', slug: project.slug, tab: 'sessions' })}>{project.name}</Anchor>
                  ),
                },
                { key: 'slug', label: 'Slug', sortBy: (project) => project.slug, render: (project) => <Code>{project.slug}</Code> },
                {
                  key: 'visibility',
                  label: 'Visibility',
                  sortBy: (project) => project.visibility,
                  render: (project) => project.visibility,
                },
                {
                  key: 'created',
                  label: 'Created',
                  sortBy: (project) => project.created ?? '',
                  render: (project) => when(project.created),
                },
              ]}
            />
          )
        }
      </Loaded>
      {projects.pager}
      <Title order={2} size="h3" mt="xl" mb="sm">
        New project
      </Title>
      <Group renderRoot={(props) => <form {...props} />} onSubmit={submit} align="flex-start" gap="sm">
        <TextInput
          label="Name"
          required
          value={name}
          onChange={(event) => setName(event.currentTarget.value)}
          error={fieldError(create.error, ['name'])}
        />
        <TextInput
          label="Slug"
          required
          value={slug}
          onChange={(event) => setSlug(event.currentTarget.value)}
          error={fieldError(create.error, ['slug'])}
          description="Lower-case letters, digits and dashes"
        />
        <Checkbox mt={34} label="Public" checked={isPublic} onChange={(event) => setPublic(event.currentTarget.checked)} />
        <Button mt={25} type="submit" loading={create.isPending} leftSection={<IconPlus size={16} />}>
          Create project
        </Button>
      </Group>
      <ErrorLine error={create.error} />
    </>
  );
}
