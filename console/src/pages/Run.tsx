import { Alert, Anchor, Box, Button, Card, Code, Grid, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { bf } from '../api.ts';
import { Downloads } from '../components/Downloads.tsx';
import { LiveLogs } from '../components/LiveLogs.tsx';
import { Block, ErrorLine, Loaded, RunStatus, when } from '../components/parts.tsx';
import { Recording } from '../components/RecordingPlayer.tsx';
import { Screenshots, stepsOf } from '../components/Screenshots.tsx';
import { hrefOf } from '../route.ts';
import { trpc } from '../trpc.ts';

const ended = (status: string) => status === 'succeeded' || status === 'failed' || status === 'cancelled';

/** A run: its status (followed until it ends), outputs node by node, result, error and live logs. */
export function RunPage({ slug, pipelineId, runId }: { slug: string; pipelineId: string; runId: string }) {
  const queries = useQueryClient();
  const run = useQuery(
    trpc.pipelineRuns.get.queryOptions(
      { project: slug, pipelineId, runId },
      { refetchInterval: (query) => (query.state.data && ended(query.state.data.status.pipeline) ? false : 1_000) },
    ),
  );
  const stop = useMutation({
    mutationFn: () => bf.pipelineRuns.stop.mutate({ project: slug, pipelineId, runId }),
    onSuccess: () => queries.invalidateQueries({ queryKey: trpc.pipelineRuns.get.queryKey({ project: slug, pipelineId, runId }) }),
  });
  return (
    <Loaded query={run}>
      {(data) => {
        const steps = stepsOf(data.nodeOutputs, data.screenshots);
        return (
          <>
            <Anchor href={hrefOf({ page: 'pipeline', slug, pipelineId })} size="sm">
              ← {data.pipeline.name}
            </Anchor>
            <Group gap="sm" mt={4} wrap="wrap">
              <Title order={1} size="h2">
                Run <Code fz="inherit">{runId.slice(0, 8)}</Code> <RunStatus status={data.status.pipeline} />
              </Title>
              {!ended(data.status.pipeline) && (
                <Button color="red" variant="light" onClick={() => stop.mutate()} loading={stop.isPending}>
                  Stop the run
                </Button>
              )}
            </Group>
            <Text size="sm" c="dimmed" mb="md">
              version <Code>{data.version.slice(0, 8)}</Code> · created {when(data.created)} · started {when(data.started)} · finished{' '}
              {when(data.finished)}
            </Text>
            <ErrorLine error={stop.error} />
            {data.error && (
              <Alert color="red" role="alert" aria-label="run error" mb="md">
                {data.error.node ? (
                  <>
                    Node <Code>{data.error.node}</Code>:{' '}
                  </>
                ) : null}
                {data.error.message} ({data.error.code})
              </Alert>
            )}
            {data.outputsWithheld && (
              <Text size="sm" c="dimmed">
                The run read cookies: its outputs are shown only to those who may read the session's.
              </Text>
            )}
            <Grid gap="lg">
              <Grid.Col span={{ base: 12, lg: 8 }} miw={0}>
                <Box component="section" aria-label="steps">
                  <Title order={2} size="h3">
                    Steps
                  </Title>
                  <Text size="sm" c="dimmed" mb="xs">
                    Screenshots:{' '}
                    {data.screenshotMode === 'steps'
                      ? 'after every step'
                      : data.screenshotMode === 'failures'
                        ? 'where a step failed'
                        : 'none'}
                  </Text>
                  {steps.length === 0 ? (
                    <Text size="sm" c="dimmed">
                      None yet.
                    </Text>
                  ) : (
                    <Stack gap="sm">
                      {steps.map((step) => (
                        <Card key={step.node} withBorder padding="sm" radius="md" component="article" aria-label={`step ${step.node}`}>
                          <Code fw={600} mb={6}>
                            {step.node}
                          </Code>
                          {/* The step's outputs beside its pictures, from 62em; below them on a narrower screen. */}
                          <SimpleGrid cols={{ base: 1, md: step.shots.length ? 2 : 1 }} spacing="sm">
                            <Box miw={0}>
                              {step.has ? (
                                <OutputsCell outputs={step.outputs} />
                              ) : (
                                <Text size="sm" c="dimmed">
                                  no outputs
                                </Text>
                              )}
                            </Box>
                            {step.shots.length > 0 && <Screenshots shots={step.shots} />}
                          </SimpleGrid>
                        </Card>
                      ))}
                    </Stack>
                  )}
                </Box>
                {data.recording && ended(data.status.pipeline) && (
                  <Box component="section" mt="lg">
                    <Title order={2} size="h3" mb="xs">
                      Recording
                    </Title>
                    <Recording
                      slug={slug}
                      sessionId={data.recording.split('/').at(-3) as string}
                      resourceId={data.recording.split('/').at(-2) as string}
                      runLogs={`/${encodeURIComponent(slug)}/api/pipelines/${encodeURIComponent(pipelineId)}/${encodeURIComponent(runId)}/logs`}
                    />
                  </Box>
                )}
                {data.resources.map((r) => (
                  <Box key={r.id} mt="lg">
                    <Downloads slug={slug} sessionId={r.session} resourceId={r.id} live={!ended(data.status.pipeline)} heading />
                  </Box>
                ))}
              </Grid.Col>
              <Grid.Col span={{ base: 12, lg: 4 }} miw={0}>
                {data.result && (
                  <>
                    <Title order={2} size="h3" mb="xs">
                      Result
                    </Title>
                    <Block label="result">{JSON.stringify(data.result, null, 2)}</Block>
                  </>
                )}
                {Object.keys(data.args).length > 0 && (
                  <>
                    <Title order={2} size="h3" my="xs">
                      Arguments
                    </Title>
                    <Block label="arguments">{JSON.stringify(data.args, null, 2)}</Block>
                  </>
                )}
                <Title order={2} size="h3" my="xs">
                  Logs
                </Title>
                <LiveLogs
                  url={`/${encodeURIComponent(slug)}/api/pipelines/${encodeURIComponent(pipelineId)}/${encodeURIComponent(runId)}/logs`}
                  screenshotHref={(id) => `/${encodeURIComponent(slug)}/api/screenshots/${encodeURIComponent(id)}`}
                />
              </Grid.Col>
            </Grid>
          </>
        );
      }}
    </Loaded>
  );
}

/** A node's outputs: a list of records as a table, anything else as JSON. */
function OutputsCell({ outputs }: { outputs: unknown }) {
  if (!outputs || typeof outputs !== 'object') return <Code style={{ overflowWrap: 'anywhere' }}>{JSON.stringify(outputs)}</Code>;
  return (
    <Stack gap={6} renderRoot={(props) => <dl {...props} />} m={0}>
      {Object.entries(outputs as Record<string, unknown>).map(([name, value]) => (
        <div key={name}>
          <Text component="dt" size="sm" fw={600}>
            {name}
          </Text>
          <Box component="dd" m={0} miw={0}>
            {isRecordList(value) ? <RecordTable rows={value} /> : <Code style={{ overflowWrap: 'anywhere' }}>{JSON.stringify(value)}</Code>}
          </Box>
        </div>
      ))}
    </Stack>
  );
}

const isRecordList = (value: unknown): value is Record<string, unknown>[] =>
  Array.isArray(value) && value.length > 0 && value.every((row) => row && typeof row === 'object' && !Array.isArray(row));

function RecordTable({ rows }: { rows: Record<string, unknown>[] }) {
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  return (
    <Table.ScrollContainer minWidth={0} type="native" tabIndex={0}>
      <Table withTableBorder verticalSpacing={4} fz="sm">
        <Table.Thead>
          <Table.Tr>
            {columns.map((column) => (
              <Table.Th key={column}>{column}</Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((row, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity of their own
            <Table.Tr key={index}>
              {columns.map((column) => (
                <Table.Td key={column}>{typeof row[column] === 'string' ? (row[column] as string) : JSON.stringify(row[column])}</Table.Td>
              ))}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
