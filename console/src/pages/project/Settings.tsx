import { Checkbox, Group, Paper, Stack, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { WriteButton } from '../../access.tsx';
import { bf, type RouterOutputs } from '../../api.ts';
import { ErrorLine, fieldError } from '../../components/parts.tsx';
import { hrefOf } from '../../route.ts';
import { trpc } from '../../trpc.ts';

type Project = RouterOutputs['projects']['get'];

/**
 * A project's name and description (projects.write), its visibility and slug (the owner's), and
 * its deletion. A new slug changes every API path of the project, so the console follows it.
 */
export function ProjectSettings({ project }: { project: Project }) {
  const queries = useQueryClient();
  const [name, setName] = useState(project.name);
  const [description, setDescription] = useState(project.description);
  const [isPublic, setPublic] = useState(project.visibility === 'public');
  const [slug, setSlug] = useState(project.slug);
  const [confirm, setConfirm] = useState('');
  const save = useMutation({
    mutationFn: () =>
      bf.projects.update.mutate({
        project: project.slug,
        ...(name !== project.name ? { name } : {}),
        ...(description !== project.description ? { description } : {}),
        ...(isPublic !== (project.visibility === 'public') ? { public: isPublic } : {}),
        ...(slug !== project.slug ? { slug } : {}),
      }),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: trpc.projects.list.queryKey() });
      if (slug !== project.slug) window.location.hash = hrefOf({ page: 'project', slug, tab: 'settings' });
      else await queries.invalidateQueries({ queryKey: trpc.projects.get.queryKey({ project: project.slug }) });
    },
  });
  const remove = useMutation({
    mutationFn: () => bf.projects.delete.mutate({ project: project.slug }),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: trpc.projects.list.queryKey() });
      window.location.hash = hrefOf({ page: 'projects' });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <section aria-labelledby="settings-title">
      <Title order={2} size="h3" id="settings-title" mb="sm">
        Settings
      </Title>
      <Stack renderRoot={(props) => <form {...props} />} onSubmit={submit} gap="sm" maw={560} aria-label="project settings">
        <TextInput
          label="Name"
          required
          value={name}
          onChange={(event) => setName(event.currentTarget.value)}
          error={fieldError(save.error, ['name'])}
        />
        <Textarea
          label="Description"
          autosize
          minRows={2}
          value={description}
          onChange={(event) => setDescription(event.currentTarget.value)}
          error={fieldError(save.error, ['description'])}
        />
        <Checkbox
          checked={isPublic}
          onChange={(event) => setPublic(event.currentTarget.checked)}
          label="Public: anyone may read it (its pipelines, functions and runs), signed in or not"
        />
        <TextInput
          label="Slug"
          description="Every API path of the project starts with it"
          required
          value={slug}
          onChange={(event) => setSlug(event.currentTarget.value)}
          error={fieldError(save.error, ['slug'])}
        />
        <Group>
          <WriteButton type="submit" loading={save.isPending}>
            Save
          </WriteButton>
        </Group>
        {save.isSuccess && <Text role="status">Saved.</Text>}
        <ErrorLine error={save.error} />
      </Stack>
      <Paper withBorder p="md" mt="xl" radius="md" maw={560} style={{ borderColor: 'var(--mantine-color-red-filled)' }}>
        <Title order={2} size="h4" c="var(--mantine-color-error)" mb="xs">
          Delete the project
        </Title>
        <Group
          renderRoot={(props) => <form {...props} />}
          aria-label="delete the project"
          align="flex-end"
          gap="sm"
          onSubmit={(event: FormEvent) => {
            event.preventDefault();
            remove.mutate();
          }}
        >
          <TextInput
            label={`Type the slug, ${project.slug}, to delete the project with everything in it`}
            value={confirm}
            onChange={(event) => setConfirm(event.currentTarget.value)}
            style={{ flex: 1, minWidth: 0 }}
          />
          <WriteButton type="submit" color="red" loading={remove.isPending} disabled={confirm !== project.slug}>
            Delete
          </WriteButton>
        </Group>
        <ErrorLine error={remove.error} />
      </Paper>
    </section>
  );
}
