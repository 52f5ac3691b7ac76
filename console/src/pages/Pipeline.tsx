import { Anchor, Badge, Box, Code, Grid, Group, NativeSelect, Paper, SimpleGrid, Stack, Text, Textarea, Title } from '@mantine/core';
import { IconPlayerPlay } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { WriteButton } from '../access.tsx';
import { bf } from '../api.ts';
import { ArgumentInput, argsOf, type Parameter } from '../components/ArgumentInput.tsx';
import { DataTable } from '../components/DataTable.tsx';
import { LazyPipelineGraph } from '../components/LazyPipelineGraph.tsx';
import { ErrorLine, fieldError, Loaded, RunStatus, when } from '../components/parts.tsx';
import { useSessionChoice } from '../components/SessionPicker.tsx';
import { hrefOf } from '../route.ts';
import { trpc } from '../trpc.ts';
import { AnalysisForm } from './pipeline/AnalysisForm.tsx';

type CompileError = { node: string | null; input?: string; code: string; message: string };

/** A pipeline: its source and the compiler's errors, its versions, a run form and its runs. */
export function PipelinePage({ slug, pipelineId }: { slug: string; pipelineId: string }) {
  const pipeline = useQuery(trpc.pipelines.get.queryOptions({ project: slug, pipelineId }));
  return (
    <Loaded query={pipeline}>
      {(data) => (
        <>
          <Anchor href={hrefOf({ page: 'project', slug, tab: 'pipelines' })} size="sm">
            ← Pipelines
          </Anchor>
          <Title order={1} size="h2" mt={4}>
            {data.name}
          </Title>
          {data.description && (
            <Text size="sm" c="dimmed">
              {data.description}
            </Text>
          )}
          <Grid gap="lg" mt="md">
            <Grid.Col span={{ base: 12, lg: 7 }} miw={0}>
              <Title order={2} size="h3">
                Graph
              </Title>
              <LazyPipelineGraph source={data.source} errors={data.errors} />
              {/* Keyed by the current version: a new one (saved, or switched to) replaces what the editor shows. */}
              <SourceEditor key={data.version} slug={slug} pipelineId={pipelineId} source={data.source} errors={data.errors} />
            </Grid.Col>
            <Grid.Col span={{ base: 12, lg: 5 }} miw={0}>
              <RunForm
                slug={slug}
                pipelineId={pipelineId}
                parameters={(data.source.parameters ?? {}) as Record<string, Parameter>}
                errors={data.errors.length}
              />
              <Title order={2} size="h3" mt="lg" mb="xs">
                Runs
              </Title>
              {data.runs.length === 0 ? (
                <Text size="sm" c="dimmed">
                  No runs yet: fill in the form above and press Run.
                </Text>
              ) : (
                <DataTable
                  label="runs"
                  rows={data.runs}
                  rowKey={(run) => run.id}
                  filterBy={(run) => `${run.id} ${run.status.pipeline}`}
                  columns={[
                    {
                      key: 'run',
                      label: 'Run',
                      render: (run) => (
                        <Anchor href={hrefOf({ page: 'run', slug, pipelineId, runId: run.id })}>
                          <Code>{run.id.slice(0, 8)}</Code>
                        </Anchor>
                      ),
                    },
                    {
                      key: 'status',
                      label: 'Status',
                      sortBy: (run) => run.status.pipeline,
                      render: (run) => <RunStatus status={run.status.pipeline} />,
                    },
                    { key: 'version', label: 'Version', render: (run) => <Code>{run.version.slice(0, 8)}</Code> },
                    { key: 'started', label: 'Started', sortBy: (run) => run.created ?? '', render: (run) => when(run.created) },
                  ]}
                />
              )}
              <AnalysisForm slug={slug} pipelineId={pipelineId} />
              <Versions slug={slug} pipelineId={pipelineId} current={data.version} />
            </Grid.Col>
          </Grid>
        </>
      )}
    </Loaded>
  );
}

/** The arguments form, made from the parameters: secret ones are password fields. */
function RunForm({
  slug,
  pipelineId,
  parameters,
  errors,
}: {
  slug: string;
  pipelineId: string;
  parameters: Record<string, Parameter>;
  errors: number;
}) {
  const { session, picker } = useSessionChoice(slug);
  const [values, setValues] = useState<Record<string, string>>({});
  const [screenshots, setScreenshots] = useState<'none' | 'failures' | 'steps'>('failures');
  const start = useMutation({
    mutationFn: () => bf.pipelineRuns.start.mutate({ project: slug, pipelineId, session, screenshots, args: argsOf(parameters, values) }),
    onSuccess: ({ id }) => {
      window.location.hash = hrefOf({ page: 'run', slug, pipelineId, runId: id });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    start.mutate();
  };
  return (
    <Paper withBorder p="md" radius="md" component="form" onSubmit={submit} aria-label="run the pipeline">
      <Stack gap="sm">
        <Title order={2} size="h3">
          Run
        </Title>
        {Object.entries(parameters).map(([name, parameter]) => (
          <ArgumentInput
            key={name}
            name={name}
            parameter={parameter}
            value={values[name] ?? ''}
            onChange={(value) => setValues({ ...values, [name]: value })}
            error={fieldError(start.error, ['args', name])}
          />
        ))}
        {picker}
        <NativeSelect
          label="Screenshots"
          value={screenshots}
          onChange={(event) => setScreenshots(event.currentTarget.value as typeof screenshots)}
          data={[
            { value: 'failures', label: 'where a step fails' },
            { value: 'steps', label: 'after every step' },
            { value: 'none', label: 'none' },
          ]}
        />
        <Group>
          <WriteButton type="submit" loading={start.isPending} disabled={!session || errors > 0} leftSection={<IconPlayerPlay size={16} />}>
            Run
          </WriteButton>
        </Group>
        {errors > 0 && (
          <Text size="sm" c="dimmed">
            The current version has compiler errors: fix them in the source to run it.
          </Text>
        )}
        <ErrorLine error={start.error} />
      </Stack>
    </Paper>
  );
}

/**
 * The source as JSON, saved as a new version. The compiler's errors are listed by node and input,
 * and each node they name is marked in the node list beside the editor.
 */
function SourceEditor({
  slug,
  pipelineId,
  source,
  errors,
}: {
  slug: string;
  pipelineId: string;
  source: Record<string, unknown>;
  errors: CompileError[];
}) {
  const queries = useQueryClient();
  const [text, setText] = useState(() => JSON.stringify(source, null, 2));
  const [parseError, setParseError] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: (parsed: Record<string, unknown>) => bf.pipelines.updateSource.mutate({ project: slug, pipelineId, source: parsed }),
    onSuccess: () =>
      Promise.all([
        queries.invalidateQueries({ queryKey: trpc.pipelines.get.queryKey({ project: slug, pipelineId }) }),
        queries.invalidateQueries({ queryKey: trpc.pipelines.versions.list.queryKey({ project: slug, pipeline: pipelineId }) }),
      ]),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    try {
      const parsed = JSON.parse(text) as Record<string, unknown>;
      setParseError(null);
      save.mutate(parsed);
    } catch (error) {
      setParseError(`Not JSON: ${(error as Error).message}`);
    }
  };
  const nodes = Object.keys((source.nodes ?? {}) as Record<string, unknown>);
  const errorsOf = (node: string | null) => errors.filter((error) => error.node === node);
  return (
    <Box component="section" mt="lg">
      <Title order={2} size="h3" mb="xs">
        Source
      </Title>
      <SimpleGrid cols={{ base: 1, md: 2 }} spacing="md">
        <Stack renderRoot={(props) => <form {...props} />} onSubmit={submit} gap="sm" miw={0}>
          <Textarea
            aria-label="source"
            spellCheck={false}
            autosize
            minRows={8}
            maxRows={40}
            styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)', fontSize: 'var(--mantine-font-size-xs)' } }}
            value={text}
            onChange={(event) => setText(event.currentTarget.value)}
            error={parseError ?? fieldError(save.error, ['source'])}
          />
          <Group>
            <WriteButton type="submit" loading={save.isPending}>
              Save as a new version
            </WriteButton>
          </Group>
          <ErrorLine error={save.error} />
        </Stack>
        <Paper component="aside" aria-label="compiler errors" withBorder p="sm" radius="md" miw={0}>
          <Text fw={600} c={errors.length ? 'var(--mantine-color-error)' : undefined}>
            {errors.length ? `${errors.length} compiler error${errors.length === 1 ? '' : 's'}` : 'Compiles without errors'}
          </Text>
          {errorsOf(null).map((error) => (
            <Text key={`${error.code}:${error.message}`} size="sm" c="var(--mantine-color-error)">
              {error.message} ({error.code})
            </Text>
          ))}
          <ul className="nodes">
            {nodes.map((node) => (
              <li key={node} className={errorsOf(node).length ? 'has-error' : undefined}>
                <Code>{node}</Code>
                {errorsOf(node).map((error) => (
                  <Text key={`${error.input}:${error.code}:${error.message}`} size="sm" c="var(--mantine-color-error)">
                    {error.input ? <Code>{error.input}</Code> : null} {error.message} ({error.code})
                  </Text>
                ))}
              </li>
            ))}
          </ul>
          {errors
            .filter((error) => error.node !== null && !nodes.includes(error.node))
            .map((error) => (
              <Text key={`${error.node}:${error.code}:${error.message}`} size="sm" c="var(--mantine-color-error)">
                <Code>{error.node}</Code> {error.message} ({error.code})
              </Text>
            ))}
        </Paper>
      </SimpleGrid>
    </Box>
  );
}

/** The pipeline's versions, newest first; any of them can be made current again. */
function Versions({ slug, pipelineId, current }: { slug: string; pipelineId: string; current: string }) {
  const queries = useQueryClient();
  const versions = useQuery(trpc.pipelines.versions.list.queryOptions({ project: slug, pipeline: pipelineId, limit: 50 }));
  const fork = useMutation({
    mutationFn: (versionId: string) => bf.pipelines.versions.fork.mutate({ sourceProject: slug, versionId }),
    onSuccess: ({ id }) => {
      window.location.hash = hrefOf({ page: 'pipeline', slug, pipelineId: id });
    },
  });
  const switchTo = useMutation({
    mutationFn: (versionId: string) => bf.pipelines.versions.switch.mutate({ project: slug, versionId, pipeline: pipelineId }),
    onSuccess: () =>
      Promise.all([
        queries.invalidateQueries({ queryKey: trpc.pipelines.get.queryKey({ project: slug, pipelineId }) }),
        queries.invalidateQueries({ queryKey: trpc.pipelines.versions.list.queryKey({ project: slug, pipeline: pipelineId }) }),
      ]),
  });
  return (
    <Box component="section" mt="lg">
      <Title order={2} size="h3" mb="xs">
        Versions
      </Title>
      <ErrorLine error={switchTo.error ?? fork.error} />
      <Loaded query={versions}>
        {(rows) => (
          <DataTable
            label="versions"
            rows={rows}
            rowKey={(version) => version.id}
            rowLabel={(version) => `version ${version.id}`}
            columns={[
              { key: 'version', label: 'Version', render: (version) => <Code>{version.id.slice(0, 8)}</Code> },
              { key: 'made', label: 'Made', render: (version) => when(version.created) },
              { key: 'errors', label: 'Errors', render: (version) => version.errorCount },
              {
                key: 'actions',
                label: 'Actions',
                render: (version) => (
                  <Group gap={6} wrap="nowrap">
                    {version.id === current ? (
                      <Badge variant="light">current</Badge>
                    ) : (
                      <WriteButton size="xs" variant="default" onClick={() => switchTo.mutate(version.id)} disabled={switchTo.isPending}>
                        Make current
                      </WriteButton>
                    )}
                    <WriteButton size="xs" variant="default" onClick={() => fork.mutate(version.id)} disabled={fork.isPending}>
                      Fork
                    </WriteButton>
                  </Group>
                ),
              },
            ]}
          />
        )}
      </Loaded>
    </Box>
  );
}
