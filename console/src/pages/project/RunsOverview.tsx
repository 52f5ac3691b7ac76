import {
  Alert,
  Anchor,
  Badge,
  Button,
  Group,
  MultiSelect,
  Pagination,
  Select,
  SimpleGrid,
  Skeleton,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
  UnstyledButton,
} from '@mantine/core';
import { IconArrowDown, IconArrowsSort, IconArrowUp, IconListDetails } from '@tabler/icons-react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { RouterInputs, RouterOutputs } from '../../api.ts';
import { FormError, fieldError } from '../../components/FormErrors.tsx';
import { hrefOf } from '../../route.ts';
import { trpc } from '../../trpc.ts';

type RunsInput = RouterInputs['projectOverview']['runs'];
type Run = RouterOutputs['projectOverview']['runs']['runs'][number];
type Sort = NonNullable<RunsInput['sort']>;
type Status = Run['status'];

const PAGE = 20;
const statuses: Status[] = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];
/** Shade 8 under white text: AA contrast (a light badge's is not, on a striped row). */
const statusColor: Record<Status, string> = {
  queued: 'gray.8',
  running: 'blue.8',
  succeeded: 'green.8',
  failed: 'red.8',
  cancelled: 'violet.8',
};
const filterFields = ['status', 'pipelineId', 'functionId', 'from', 'to'] as const;

/** A `datetime-local` value (the browser's time zone) as the API's ISO time; what is not a time goes as typed, for the API to name. */
function isoOf(local: string) {
  if (!local) return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? local : date.toISOString();
}

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');

function duration(run: Run) {
  if (!run.started) return '—';
  const ms = (run.finished ? Date.parse(run.finished) : Date.now()) - Date.parse(run.started);
  const seconds = Math.max(0, Math.round(ms / 1000));
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/**
 * The project's runs across its pipelines and functions (`projectOverview.runs`), newest first:
 * filtered by status, pipeline or function and time, sorted by a column's header, 20 to a page.
 * A pipeline's run links to its page; a function's execution to the project's functions.
 */
export function RunsOverviewPage({ project }: { project: string }) {
  const [status, setStatus] = useState<string[]>([]);
  const [target, setTarget] = useState<string | null>(null);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [sort, setSort] = useState<{ by: Sort; order: 'asc' | 'desc' }>({ by: 'created', order: 'desc' });
  const [page, setPage] = useState(1);
  const pipelines = useQuery(trpc.pipelines.list.queryOptions({ project, limit: 200 }));
  const functions = useQuery(trpc.functions.list.queryOptions({ project, limit: 200 }));
  const [kind, id] = target ? target.split(':') : [];
  const input: RunsInput = {
    project,
    ...(status.length ? { status: status as Status[] } : {}),
    ...(kind === 'pipeline' ? { pipelineId: id } : kind === 'function' ? { functionId: id } : {}),
    ...(from ? { from: isoOf(from) } : {}),
    ...(to ? { to: isoOf(to) } : {}),
    sort: sort.by,
    order: sort.order,
    limit: PAGE,
    offset: (page - 1) * PAGE,
  };
  const runs = useQuery(trpc.projectOverview.runs.queryOptions(input, { placeholderData: keepPreviousData, refetchInterval: 5_000 }));
  const filtered = status.length > 0 || target !== null || from !== '' || to !== '';
  const changed =
    <T,>(set: (value: T) => void) =>
    (value: T) => {
      set(value);
      setPage(1);
    };
  const sortBy = (by: Sort) => {
    setSort((current) => ({ by, order: current.by === by && current.order === 'desc' ? 'asc' : 'desc' }));
    setPage(1);
  };
  const targets = [
    { group: 'Pipelines', items: (pipelines.data ?? []).map((pipeline) => ({ value: `pipeline:${pipeline.id}`, label: pipeline.name })) },
    { group: 'Functions', items: (functions.data ?? []).map((fn) => ({ value: `function:${fn.id}`, label: `${fn.name} (${fn.slug})` })) },
  ].filter((group) => group.items.length > 0);
  const error = runs.error;
  const pages = runs.data ? Math.max(1, Math.ceil(runs.data.total / PAGE)) : 1;
  return (
    <Stack>
      <Title order={2}>Runs</Title>
      <Text size="sm">Every run of the project's pipelines and functions, newest first.</Text>
      <form aria-label="filter runs" onSubmit={(event) => event.preventDefault()}>
        <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }}>
          <MultiSelect
            label="Status"
            placeholder={status.length ? undefined : 'Any status'}
            data={statuses}
            value={status}
            onChange={changed(setStatus)}
            clearable
            error={fieldError(error, ['status'])}
          />
          <Select
            label="Pipeline or function"
            placeholder="All"
            data={targets}
            value={target}
            onChange={changed(setTarget)}
            clearable
            searchable
            error={fieldError(error, ['pipelineId']) ?? fieldError(error, ['functionId'])}
          />
          <TextInput
            label="From"
            type="datetime-local"
            value={from}
            onChange={(event) => changed(setFrom)(event.currentTarget.value)}
            error={fieldError(error, ['from'])}
          />
          <TextInput
            label="To"
            type="datetime-local"
            value={to}
            onChange={(event) => changed(setTo)(event.currentTarget.value)}
            error={fieldError(error, ['to'])}
          />
        </SimpleGrid>
        {filtered && (
          <Group mt="xs">
            <Button
              variant="default"
              size="xs"
              onClick={() => {
                setStatus([]);
                setTarget(null);
                setFrom('');
                setTo('');
                setPage(1);
              }}
            >
              Clear filters
            </Button>
          </Group>
        )}
      </form>
      <FormError error={error} fields={filterFields} title="The runs could not be read" />
      {!runs.data && !runs.isError && (
        <Stack gap="xs" aria-label="loading runs">
          <Skeleton height={28} />
          <Skeleton height={28} />
          <Skeleton height={28} />
        </Stack>
      )}
      {runs.data?.total === 0 && !filtered && (
        <Alert variant="light" color="gray" icon={<IconListDetails size={18} />} title="No runs yet">
          <Stack gap="xs" align="flex-start">
            <Text size="sm">Run a pipeline from its page, or try a function, and its runs show here.</Text>
            <Group>
              <Button component="a" href={hrefOf({ page: 'project', slug: project, tab: 'pipelines' })}>
                Open pipelines
              </Button>
              <Button component="a" variant="default" href={hrefOf({ page: 'project', slug: project, tab: 'functions' })}>
                Open functions
              </Button>
            </Group>
          </Stack>
        </Alert>
      )}
      {runs.data?.total === 0 && filtered && (
        <Alert variant="light" color="gray" icon={<IconListDetails size={18} />} title="No runs match these filters">
          <Text size="sm">Widen the time range, choose another status, or clear the filters.</Text>
        </Alert>
      )}
      {runs.data && runs.data.total > 0 && (
        <>
          <Table aria-label="runs" striped layout="fixed">
            <Table.Thead>
              <Table.Tr>
                <SortableTh label="Status" by="status" sort={sort} onSort={sortBy} width="7.5rem" />
                <Table.Th>Pipeline or function</Table.Th>
                <SortableTh label="Created" by="created" sort={sort} onSort={sortBy} />
                <SortableTh label="Started" by="started" sort={sort} onSort={sortBy} visibleFrom="md" />
                <SortableTh label="Finished" by="finished" sort={sort} onSort={sortBy} visibleFrom="sm" />
                <Table.Th visibleFrom="sm" w="6.5rem">
                  Took
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {runs.data.runs.map((run) => (
                <RunRow key={run.id} project={project} run={run} />
              ))}
            </Table.Tbody>
          </Table>
          <Group justify="space-between" gap="xs">
            <Text size="sm">
              {runs.data.total} run{runs.data.total === 1 ? '' : 's'}
            </Text>
            {pages > 1 && <Pagination total={pages} value={page} onChange={setPage} size="sm" aria-label="pages of runs" />}
          </Group>
        </>
      )}
    </Stack>
  );
}

function SortableTh({
  label,
  by,
  sort,
  onSort,
  width,
  visibleFrom,
}: {
  label: string;
  by: Sort;
  sort: { by: Sort; order: 'asc' | 'desc' };
  onSort: (by: Sort) => void;
  width?: string;
  visibleFrom?: 'sm' | 'md';
}) {
  const active = sort.by === by;
  const Icon = !active ? IconArrowsSort : sort.order === 'asc' ? IconArrowUp : IconArrowDown;
  return (
    <Table.Th w={width} visibleFrom={visibleFrom} aria-sort={active ? (sort.order === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <UnstyledButton onClick={() => onSort(by)} fw={700} fz="sm">
        <Group gap={4} wrap="nowrap">
          {label}
          <Icon size={14} aria-hidden />
        </Group>
      </UnstyledButton>
    </Table.Th>
  );
}

function RunRow({ project, run }: { project: string; run: Run }) {
  const name = run.pipeline?.name ?? (run.function ? `${run.function.name} (function)` : 'a run');
  const href = run.pipeline
    ? hrefOf({ page: 'run', slug: project, pipelineId: run.pipeline.id, runId: run.id })
    : hrefOf({ page: 'project', slug: project, tab: 'functions' });
  return (
    <Table.Tr aria-label={`run ${run.id}`}>
      <Table.Td>
        <Badge color={statusColor[run.status]} variant="dot">
          {run.status}
        </Badge>
      </Table.Td>
      <Table.Td>
        <Anchor href={href} c="var(--mantine-color-blue-light-color)" underline="always" display="block" truncate="end" title={name}>
          {name}
        </Anchor>
        {run.error && (
          <Text
            size="xs"
            c="var(--mantine-color-error)"
            truncate="end"
            title={`${run.error.code}${run.error.node ? ` at ${run.error.node}` : ''}`}
          >
            {run.error.code}
            {run.error.node ? ` at ${run.error.node}` : ''}
          </Text>
        )}
      </Table.Td>
      <Table.Td>
        <Text size="sm" truncate="end">
          {when(run.created)}
        </Text>
      </Table.Td>
      <Table.Td visibleFrom="md">
        <Text size="sm" truncate="end">
          {when(run.started)}
        </Text>
      </Table.Td>
      <Table.Td visibleFrom="sm">
        <Text size="sm" truncate="end">
          {when(run.finished)}
        </Text>
      </Table.Td>
      <Table.Td visibleFrom="sm">{duration(run)}</Table.Td>
    </Table.Tr>
  );
}
