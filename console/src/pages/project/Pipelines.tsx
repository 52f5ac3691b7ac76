import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { WriteButton } from '../../access.tsx';
import { bf } from '../../api.ts';
import { ErrorLine, Loaded, usePagedList, when } from '../../components/parts.tsx';
import { hrefOf } from '../../route.ts';
import { trpc } from '../../trpc.ts';

/** A first pipeline to start from: a page, a navigation and a heading read (docs/pipeline-language.md). */
export const starterSource = {
  parameters: { url: { refType: 'string', default: 'https://example.com' } },
  nodes: {
    page: { type: 'browser.page' },
    open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: { $param: 'url' } } },
    heading: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: 'h1' } },
  },
  outputs: { heading: { $ref: 'heading.text' } },
};

/** The project's pipelines, and a form that creates one (its source is edited on its page). */
export function PipelinesTab({ slug }: { slug: string }) {
  const queries = useQueryClient();
  const pipelines = usePagedList((page) => trpc.pipelines.list.queryOptions({ project: slug, ...page }), 'pipelines');
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: () => bf.pipelines.create.mutate({ project: slug, name, source: starterSource }),
    onSuccess: async ({ id }) => {
      await queries.invalidateQueries({ queryKey: trpc.pipelines.list.queryKey({ project: slug }) });
      window.location.hash = hrefOf({ page: 'pipeline', slug, pipelineId: id });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <section>
      <h2>Pipelines</h2>
      <Loaded query={pipelines}>
        {(rows) =>
          rows.length === 0 ? (
            <p className="muted">No pipelines yet.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Description</th>
                  <th>Changed</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((pipeline) => (
                  <tr key={pipeline.id}>
                    <td>
                      <a href={hrefOf({ page: 'pipeline', slug, pipelineId: pipeline.id })}>{pipeline.name}</a>
                    </td>
                    <td>{pipeline.description}</td>
                    <td>{when(pipeline.updated)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      {pipelines.pager}
      <form onSubmit={submit} className="row">
        <label>
          New pipeline
          <input required placeholder="name" value={name} onChange={(event) => setName(event.target.value)} />
        </label>
        <WriteButton type="submit" disabled={create.isPending}>
          Create pipeline
        </WriteButton>
      </form>
      <ErrorLine error={create.error} />
    </section>
  );
}
