import { Alert, Button, Group, Modal, Select, Stack, Table, Text, Textarea, TextInput } from '@mantine/core';
import { IconFunction, IconPlus } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useProjectAccess } from '../../access.tsx';
import { bf, type RouterOutputs } from '../../api.ts';
import { FormError, fieldError } from '../../components/FormErrors.tsx';
import { trpc } from '../../trpc.ts';

type Catalog = Extract<RouterOutputs['pipelineNodes']['catalog'], { nodes: unknown }>;
type Definition = Parameters<typeof bf.functions.create.mutate>[0]['definition'];
type Parameter = NonNullable<Definition['parameters']>[number];
type Output = NonNullable<Definition['outputs']>[number];
type RefType = Parameter['refType'];

/**
 * A function's interface as a pipeline version declares it (spec 2, Function; docs/functions.md):
 * a parameter per source parameter, of its type; an output per source output (the source's
 * declared `outputs`, so no `source` reference is needed), of the type of the node output or
 * parameter it names, as the node catalog gives it. A `page` is no function output: left out.
 */
export function interfaceOf(source: Record<string, unknown>, catalog: Catalog | undefined) {
  const declared = (source.parameters ?? {}) as Record<string, { refType: RefType; description?: string }>;
  const parameters: Parameter[] = Object.entries(declared).map(([name, parameter]) => ({
    name,
    refType: parameter.refType,
    ...(parameter.description ? { description: parameter.description } : {}),
  }));
  const nodes = (source.nodes ?? {}) as Record<string, { type?: string }>;
  const types = new Map(catalog?.nodes.map((node) => [node.type, node]) ?? []);
  const outputs: Output[] = [];
  const skipped: string[] = [];
  for (const [name, value] of Object.entries((source.outputs ?? {}) as Record<string, { $ref?: string; $param?: string }>)) {
    let refType: RefType | 'page' | undefined;
    if (value.$param) refType = declared[value.$param]?.refType;
    else if (value.$ref) {
      const [nodeName = '', outputName = ''] = value.$ref.split('.');
      const nodeType = nodes[nodeName]?.type;
      refType = nodeType ? types.get(nodeType)?.outputs[outputName]?.refType : undefined;
    }
    if (refType === 'page') skipped.push(name);
    else outputs.push({ name, refType: refType ?? 'json' });
  }
  return { parameters, outputs, skipped };
}

/** A slug from a name: what the API accepts (letters, digits, `-`, `_`). */
const slugOf = (name: string) =>
  name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64);

/**
 * "Create function": a pipeline and one of its versions, the function's interface filled from
 * that version, then PUT …/functions with its source and interface and an import of the version,
 * so the function's current version records the pipeline version it came from. With `empty`, the
 * project's first function: the empty state that says so, with the button.
 */
export function CreateFunction({ slug, empty = false }: { slug: string; empty?: boolean }) {
  const [open, setOpen] = useState(false);
  const access = useProjectAccess();
  const button = (
    <Button
      leftSection={<IconPlus size={16} />}
      onClick={() => setOpen(true)}
      disabled={access.readOnly}
      title={access.readOnly ? access.why : undefined}
    >
      Create function
    </Button>
  );
  return (
    <>
      {empty ? (
        <Alert variant="light" color="gray" icon={<IconFunction size={18} />} title="No functions yet">
          <Stack gap="xs" align="flex-start">
            <Text size="sm">Publish a pipeline version as a function: its parameters and outputs become the function's.</Text>
            {button}
          </Stack>
        </Alert>
      ) : (
        <Group>{button}</Group>
      )}
      <Modal
        closeButtonProps={{ 'aria-label': 'Close' }}
        opened={open}
        onClose={() => setOpen(false)}
        title="Create function from a pipeline"
        size="lg"
      >
        {open && <CreateFunctionForm slug={slug} onDone={() => setOpen(false)} />}
      </Modal>
    </>
  );
}

function CreateFunctionForm({ slug, onDone }: { slug: string; onDone: () => void }) {
  const queries = useQueryClient();
  const pipelines = useQuery(trpc.pipelines.list.queryOptions({ project: slug, limit: 200 }));
  const catalog = useQuery(trpc.pipelineNodes.catalog.queryOptions({ project: slug, format: 'catalog' }));
  const [pipelineId, setPipelineId] = useState<string | null>(null);
  const [versionId, setVersionId] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [fnSlug, setFnSlug] = useState('');
  const [slugEdited, setSlugEdited] = useState(false);
  const [description, setDescription] = useState('');
  const [missing, setMissing] = useState<{ pipeline?: string; version?: string }>({});
  const versions = useQuery({
    ...trpc.pipelines.versions.list.queryOptions({ project: slug, pipeline: pipelineId ?? '', limit: 50 }),
    enabled: !!pipelineId,
  });
  const version = useQuery({
    ...trpc.pipelines.versions.get.queryOptions({ project: slug, versionId: versionId ?? '' }),
    enabled: !!versionId,
  });
  const catalogData = catalog.data && 'nodes' in catalog.data ? (catalog.data as Catalog) : undefined;
  const shape = version.data ? interfaceOf(version.data.source, catalogData) : null;
  const current = pipelines.data?.find((pipeline) => pipeline.id === pipelineId)?.version;

  const create = useMutation({
    mutationFn: async () => {
      if (!version.data || !shape || !pipelineId) throw new Error('Choose a pipeline and a version first');
      const created = await bf.functions.create.mutate({
        project: slug,
        name,
        slug: fnSlug,
        description,
        definition: {
          source: version.data.source,
          parameters: shape.parameters,
          outputs: shape.outputs,
          metadata: version.data.metadata,
          outputType: 'function',
        },
      });
      return bf.functions.import.mutate({ project: slug, functionId: created.id, pipelineId, pipelineVersionId: version.data.id });
    },
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: trpc.functions.list.queryKey({ project: slug }) });
      onDone();
    },
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const problems = { pipeline: pipelineId ? undefined : 'Choose a pipeline', version: versionId ? undefined : 'Choose a version' };
    setMissing(problems);
    if (problems.pipeline || problems.version) return;
    create.mutate();
  };
  const error = create.error;
  return (
    <form onSubmit={submit} aria-label="create function" noValidate>
      <Stack>
        <Select
          label="Pipeline"
          placeholder={pipelines.data?.length === 0 ? 'No pipelines yet: create one under Pipelines' : 'Choose a pipeline'}
          data={pipelines.data?.map((pipeline) => ({ value: pipeline.id, label: pipeline.name })) ?? []}
          value={pipelineId}
          onChange={(value) => {
            setPipelineId(value);
            setVersionId(null);
            const chosen = pipelines.data?.find((pipeline) => pipeline.id === value);
            if (chosen) {
              setVersionId(chosen.version);
              if (!name) setName(chosen.name);
              if (!slugEdited && !name) setFnSlug(slugOf(chosen.name));
            }
          }}
          error={missing.pipeline ?? fieldError(error, ['pipelineId'])}
          searchable
          nothingFoundMessage="No pipeline of that name"
        />
        <Select
          label="Version"
          placeholder={pipelineId ? 'Choose a version' : 'Choose a pipeline first'}
          disabled={!pipelineId}
          data={
            versions.data?.map((item) => ({
              value: item.id,
              label: `${new Date(item.created).toLocaleString()} · ${item.id.slice(0, 8)}${item.id === current ? ' (current)' : ''}${
                item.errorCount ? ` · ${item.errorCount} error(s)` : ''
              }`,
            })) ?? []
          }
          value={versionId}
          onChange={setVersionId}
          error={missing.version ?? fieldError(error, ['pipelineVersionId'])}
        />
        <TextInput
          label="Name"
          value={name}
          onChange={(event) => {
            setName(event.currentTarget.value);
            if (!slugEdited) setFnSlug(slugOf(event.currentTarget.value));
          }}
          error={fieldError(error, ['name'])}
        />
        <TextInput
          label="Slug"
          value={fnSlug}
          onChange={(event) => {
            setSlugEdited(true);
            setFnSlug(event.currentTarget.value);
          }}
          error={fieldError(error, ['slug'])}
        />
        <Textarea
          label="Description"
          autosize
          minRows={2}
          value={description}
          onChange={(event) => setDescription(event.currentTarget.value)}
          error={fieldError(error, ['description'])}
        />
        {shape && <InterfacePreview parameters={shape.parameters} outputs={shape.outputs} skipped={shape.skipped} />}
        {version.data && version.data.errors.length > 0 && (
          <Alert color="yellow" variant="light" title="This version does not compile">
            A function made from it cannot execute until a version without errors is imported.
          </Alert>
        )}
        <FormError error={error} fields={['name', 'slug', 'description', 'pipelineId', 'pipelineVersionId']} />
        <Group justify="flex-end">
          <Button variant="default" onClick={onDone}>
            Cancel
          </Button>
          <Button type="submit" loading={create.isPending}>
            Create function
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function InterfacePreview({ parameters, outputs, skipped }: { parameters: Parameter[]; outputs: Output[]; skipped: string[] }) {
  const rows = [
    ...parameters.map((item) => ({ kind: 'parameter', ...item })),
    ...outputs.map((item) => ({ kind: 'output', description: undefined, ...item })),
  ];
  return (
    <Stack gap={4}>
      <Text fw={500} size="sm">
        Interface, from the version
      </Text>
      {rows.length === 0 ? (
        <Text size="sm">The version declares no parameters and no outputs.</Text>
      ) : (
        <Table.ScrollContainer minWidth={300}>
          <Table aria-label="function interface" striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Kind</Table.Th>
                <Table.Th>Name</Table.Th>
                <Table.Th>Type</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((row) => (
                <Table.Tr key={`${row.kind}:${row.name}`}>
                  <Table.Td>{row.kind}</Table.Td>
                  <Table.Td>{row.name}</Table.Td>
                  <Table.Td>{row.refType}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {skipped.length > 0 && <Text size="xs">Left out (a page is no function output): {skipped.join(', ')}</Text>}
    </Stack>
  );
}
