import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { bf } from '../api.ts';
import { ConfirmButton, Copyable, ErrorLine, Loaded, usePagedList, when } from '../components/parts.tsx';
import { trpc } from '../trpc.ts';

type AccessType = 'full' | 'projects' | 'custom';

/**
 * Your API keys: created with their scope (everything you may do, some projects, or permission
 * strings), the secret shown once, revoked at once.
 */
export function ApiKeysPage() {
  const queries = useQueryClient();
  const keys = usePagedList((page) => trpc.apiKeys.list.queryOptions(page), 'API keys');
  const projects = useQuery(trpc.projects.list.queryOptions({ my: true, limit: 100 }));
  const [name, setName] = useState('');
  const [accessType, setAccessType] = useState<AccessType>('full');
  const [projectIds, setProjectIds] = useState<string[]>([]);
  const [permissions, setPermissions] = useState('');
  const create = useMutation({
    mutationFn: () =>
      bf.apiKeys.create.mutate({
        name,
        accessType,
        projectIds: accessType === 'projects' ? projectIds : [],
        permissions: accessType === 'custom' ? permissions.split(/[\s,]+/).filter(Boolean) : [],
      }),
    onSuccess: () => {
      setName('');
      return queries.invalidateQueries({ queryKey: trpc.apiKeys.list.queryKey() });
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => bf.apiKeys.delete.mutate({ id }),
    onSuccess: () => queries.invalidateQueries({ queryKey: trpc.apiKeys.list.queryKey() }),
  });
  const projectName = (id: string) => projects.data?.find((project) => project.id === id)?.slug ?? id;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <>
      <h1>API keys</h1>
      {create.data && (
        <div className="notice" role="status">
          <p>
            <strong>{create.data.name}</strong> is created. Copy its secret now: it is not shown again.
          </p>
          <Copyable label="Secret" value={create.data.secret} />
        </div>
      )}
      <Loaded query={keys}>
        {(rows) =>
          rows.length === 0 ? (
            <p className="muted">No keys yet.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Key</th>
                  <th>Scope</th>
                  <th>Last used</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {rows.map((key) => (
                  <tr key={key.id}>
                    <td>{key.name}</td>
                    <td>
                      <code>{key.keyPrefix}…</code>
                    </td>
                    <td>
                      {key.accessType === 'full' && 'everything you may do'}
                      {key.accessType === 'projects' && `projects: ${key.projectIds.map(projectName).join(', ')}`}
                      {key.accessType === 'custom' && key.permissions.join(', ')}
                    </td>
                    <td>{when(key.lastUsed)}</td>
                    <td>
                      <ConfirmButton
                        question={`Revoke ${key.name}? Whatever uses it stops working.`}
                        yes="Yes, revoke"
                        onConfirm={() => revoke.mutate(key.id)}
                        disabled={revoke.isPending}
                      >
                        Revoke
                      </ConfirmButton>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      {keys.pager}
      <ErrorLine error={revoke.error} />
      <h2>New key</h2>
      <form onSubmit={submit} className="stack">
        <label>
          Name
          <input required value={name} onChange={(event) => setName(event.target.value)} />
        </label>
        <label>
          Scope
          <select value={accessType} onChange={(event) => setAccessType(event.target.value as AccessType)}>
            <option value="full">Everything you may do</option>
            <option value="projects">Some projects</option>
            <option value="custom">Permission strings</option>
          </select>
        </label>
        {accessType === 'projects' && (
          <fieldset>
            <legend>Projects</legend>
            {projects.data?.map((project) => (
              <label key={project.id} className="inline">
                <input
                  type="checkbox"
                  checked={projectIds.includes(project.id)}
                  onChange={(event) =>
                    setProjectIds(event.target.checked ? [...projectIds, project.id] : projectIds.filter((id) => id !== project.id))
                  }
                />{' '}
                {project.name}
              </label>
            ))}
          </fieldset>
        )}
        {accessType === 'custom' && (
          <label>
            Permission strings, e.g. <code>sessions.read</code> or <code>my-shop:pipelines.run</code>
            <input required value={permissions} onChange={(event) => setPermissions(event.target.value)} />
          </label>
        )}
        <button type="submit" disabled={create.isPending}>
          Create key
        </button>
        <ErrorLine error={create.error} />
      </form>
    </>
  );
}
