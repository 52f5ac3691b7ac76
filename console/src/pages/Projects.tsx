import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { bf } from '../api.ts';
import { ErrorLine, FieldIssue, Loaded, usePagedList, when } from '../components/parts.tsx';
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
      <h1>Projects</h1>
      <Loaded query={projects}>
        {(rows) =>
          rows.length === 0 ? (
            <p className="muted">No projects yet: create the first below.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Slug</th>
                  <th>Visibility</th>
                  <th>Created</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((project) => (
                  <tr key={project.id}>
                    <td>
                      <a href={hrefOf({ page: 'project', slug: project.slug, tab: 'sessions' })}>{project.name}</a>
                    </td>
                    <td>
                      <code>{project.slug}</code>
                    </td>
                    <td>{project.visibility}</td>
                    <td>{when(project.created)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      {projects.pager}
      <h2>New project</h2>
      <form onSubmit={submit} className="row">
        <label>
          Name
          <input required value={name} onChange={(event) => setName(event.target.value)} />
          <FieldIssue error={create.error} path={['name']} />
        </label>
        <label>
          Slug
          <input required value={slug} onChange={(event) => setSlug(event.target.value)} />
          <FieldIssue error={create.error} path={['slug']} />
        </label>
        <label className="inline">
          <input type="checkbox" checked={isPublic} onChange={(event) => setPublic(event.target.checked)} /> Public
        </label>
        <button type="submit" disabled={create.isPending}>
          Create project
        </button>
      </form>
      <ErrorLine error={create.error} />
    </>
  );
}
