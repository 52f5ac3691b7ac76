import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { WriteButton } from '../../access.tsx';
import { bf, type RouterOutputs } from '../../api.ts';
import { ErrorLine } from '../../components/parts.tsx';
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
    <section>
      <h2>Settings</h2>
      <form onSubmit={submit} className="stack" aria-label="project settings">
        <label>
          Name
          <input required value={name} onChange={(event) => setName(event.target.value)} />
        </label>
        <label>
          Description
          <textarea rows={2} value={description} onChange={(event) => setDescription(event.target.value)} />
        </label>
        <label className="inline">
          <input type="checkbox" checked={isPublic} onChange={(event) => setPublic(event.target.checked)} /> Public: anyone may read it (its
          pipelines, functions and runs), signed in or not
        </label>
        <label>
          Slug (every API path of the project starts with it)
          <input required value={slug} onChange={(event) => setSlug(event.target.value)} />
        </label>
        <WriteButton type="submit" disabled={save.isPending}>
          Save
        </WriteButton>
        {save.isSuccess && <p role="status">Saved.</p>}
        <ErrorLine error={save.error} />
      </form>
      <h2>Delete the project</h2>
      <form
        className="row"
        aria-label="delete the project"
        onSubmit={(event) => {
          event.preventDefault();
          remove.mutate();
        }}
      >
        <label>
          Type the slug, {project.slug}, to delete the project with everything in it
          <input value={confirm} onChange={(event) => setConfirm(event.target.value)} />
        </label>
        <WriteButton type="submit" disabled={remove.isPending || confirm !== project.slug}>
          Delete
        </WriteButton>
      </form>
      <ErrorLine error={remove.error} />
    </section>
  );
}
