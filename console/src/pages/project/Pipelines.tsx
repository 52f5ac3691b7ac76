import { Anchor, Group, TextInput, Title } from '@mantine/core';
import { IconPlus } from '@tabler/icons-react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useRef, useState } from 'react';
import { useProjectAccess, WriteButton } from '../../access.tsx';
import { bf } from '../../api.ts';
import { DataTable, Empty } from '../../components/DataTable.tsx';
import { ErrorLine, fieldError, Loaded, usePagedList, when } from '../../components/parts.tsx';
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
  const nameInput = useRef<HTMLInputElement>(null);
  const access = useProjectAccess();
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
    <section aria-labelledby="pipelines-title">
      <Title order={2} size="h3" id="pipelines-title" mb="sm">
        Pipelines
      </Title>
      <Loaded query={pipelines}>
        {(rows) =>
          rows.length === 0 ? (
            <Empty
              title="No pipelines yet"
              text="A pipeline is a graph of browser steps with parameters and outputs. Name one below: it starts from a small example that opens a page and reads its heading."
              action={access.readOnly ? undefined : { label: 'Name the first pipeline', onClick: () => nameInput.current?.focus() }}
            />
          ) : (
            <DataTable
              label="pipelines"
              rows={rows}
              rowKey={(pipeline) => pipeline.id}
              filterBy={(pipeline) => `${pipeline.name} ${pipeline.description}`}
              columns={[
                {
                  key: 'name',
                  label: 'Name',
                  sortBy: (pipeline) => pipeline.name,
                  render: (pipeline) => <Anchor href={hrefOf({ page: 'pipeline', slug, pipelineId: pipeline.id })}>{pipeline.name}</Anchor>,
                },
                { key: 'description', label: 'Description', render: (pipeline) => pipeline.description },
                {
                  key: 'changed',
                  label: 'Changed',
                  sortBy: (pipeline) => pipeline.updated ?? '',
                  render: (pipeline) => when(pipeline.updated),
                },
              ]}
            />
          )
        }
      </Loaded>
      {pipelines.pager}
      <Group renderRoot={(props) => <form {...props} />} onSubmit={submit} align="flex-end" gap="sm" mt="lg">
        <TextInput
          ref={nameInput}
          label="New pipeline"
          required
          placeholder="name"
          value={name}
          onChange={(event) => setName(event.currentTarget.value)}
          error={fieldError(create.error, ['name'])}
        />
        <WriteButton type="submit" loading={create.isPending} leftSection={<IconPlus size={16} />}>
          Create pipeline
        </WriteButton>
      </Group>
      <ErrorLine error={create.error} />
    </section>
  );
}
