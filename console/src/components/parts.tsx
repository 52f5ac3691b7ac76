import { Alert, Badge, Box, Button, Code, CopyButton, Group, List, Skeleton, Stack, Text } from '@mantine/core';
import { modals } from '@mantine/modals';
import { IconAlertCircle, IconCheck, IconCopy } from '@tabler/icons-react';
import { type QueryKey, type UseQueryOptions, useQuery } from '@tanstack/react-query';
import { type ComponentType, type ReactNode, useState } from 'react';
import { issuesOf, messageOf } from '../api.ts';

/** A failed call, as the service put it, with each of its issues by the input it names. */
export function ErrorLine({ error }: { error: unknown }) {
  if (!error) return null;
  const issues = issuesOf(error);
  return (
    <Alert role="alert" color="red" variant="light" icon={<IconAlertCircle size={18} />} my="sm" className="error">
      <Text size="sm">{messageOf(error)}</Text>
      {issues.length > 0 && (
        <List size="sm" aria-label="issues" mt={4}>
          {issues.map((issue) => (
            <List.Item key={`${issue.path.join('.')}:${issue.message}`}>
              {issue.path.length > 0 && <Code>{issue.path.join('.')}</Code>} {issue.message}
            </List.Item>
          ))}
        </List>
      )}
    </Alert>
  );
}

/**
 * What a page shows of the query it is made from: a skeleton of lines until the answer comes,
 * what went wrong if the query failed (a failed refetch too), else `children` of the answer.
 * `page` gives the skeleton the page's margins, for what is drawn outside the console's shell.
 */
export function Loaded<T>({
  query,
  page = false,
  children,
}: {
  query: { data: T | undefined; isError: boolean; error: unknown };
  page?: boolean;
  children: (data: T) => ReactNode;
}) {
  if (query.isError) return <ErrorLine error={query.error} />;
  if (query.data === undefined)
    return (
      <Stack gap="xs" p={page ? 'xl' : 0} aria-busy="true" aria-label="Loading">
        <Skeleton height={18} width="40%" />
        <Skeleton height={12} />
        <Skeleton height={12} width="85%" />
      </Stack>
    );
  return children(query.data);
}

/** What the failed call said of the input at `path` (e.g. `['args', 'url']`), for a Mantine input's `error`. */
export function fieldError(error: unknown, path: readonly (string | number)[]): string | undefined {
  const said = issuesOf(error).filter((issue) => path.every((part, index) => String(issue.path[index]) === String(part)));
  return said.length ? said.map((issue) => issue.message).join('; ') : undefined;
}

/** Beside a field: what the failed call said of the input at `path` (e.g. `['args', 'url']`), if anything. */
export function FieldIssue({ error, path }: { error: unknown; path: readonly (string | number)[] }) {
  const said = fieldError(error, path);
  if (!said) return null;
  return (
    <Text component="span" size="sm" c="var(--mantine-color-error)" className="error field-issue" role="alert">
      {said}
    </Text>
  );
}

/** How many rows a list shows at once. */
export const PAGE_SIZE = 20;

/**
 * A list read a page at a time with the API's `limit` and `offset`: one row more than shown is
 * asked for, to know whether a next page exists. The answer is a query for `Loaded` (its `data`
 * the page's rows) with `pager`, the Previous / Next bar (none when everything fits on one page).
 * `optionsOf` gives the list procedure's options for a page (`trpc.x.list.queryOptions({ ...input,
 * ...page })`), so its key without the page refreshes them all.
 */
export function usePagedList<T>(
  optionsOf: (page: { limit: number; offset: number }) => UseQueryOptions<T[], Error, T[], QueryKey>,
  label: string,
) {
  const [offset, setOffset] = useState(0);
  const query = useQuery(optionsOf({ limit: PAGE_SIZE + 1, offset }));
  const more = (query.data?.length ?? 0) > PAGE_SIZE;
  const data = query.data?.slice(0, PAGE_SIZE);
  const pager =
    offset === 0 && !more ? null : (
      <Group renderRoot={(props) => <nav {...props} />} aria-label={`${label}: pages`} gap="sm" mt="sm">
        <Button variant="default" size="xs" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}>
          Previous
        </Button>
        <Text size="sm" c="dimmed">
          {offset + 1}–{offset + (data?.length ?? 0)}
        </Text>
        <Button variant="default" size="xs" disabled={!more} onClick={() => setOffset(offset + PAGE_SIZE)}>
          Next
        </Button>
      </Group>
    );
  return { data, isError: query.isError, error: query.error, pager };
}

/**
 * A value to paste elsewhere (a URL, a secret, a snippet), with a button that copies it. A long
 * one-line value is cut short with an ellipsis (its whole text stays in the page, for the copy).
 */
export function Copyable({ label, value, multiline = false }: { label: string; value: string; multiline?: boolean }) {
  return (
    <Box className="copyable" my={6} miw={0}>
      <Text size="sm" fw={500} className="label">
        {label}
      </Text>
      <Group gap={6} wrap="nowrap" align={multiline ? 'flex-start' : 'center'} miw={0}>
        <Box style={{ flex: 1, minWidth: 0 }}>
          {multiline ? (
            <Block label={label}>{value}</Block>
          ) : (
            <Code component="output" aria-label={label} title={value} display="block" className="one-line">
              {value}
            </Code>
          )}
        </Box>
        <CopyButton value={value} timeout={1500}>
          {({ copied, copy }) => (
            <Button size="xs" variant="default" onClick={copy} leftSection={copied ? <IconCheck size={14} /> : <IconCopy size={14} />}>
              {copied ? 'Copied' : 'Copy'}
            </Button>
          )}
        </CopyButton>
      </Group>
    </Box>
  );
}

/** `iso` as this browser's local date and time; a dash for none. */
export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

/**
 * Text shown as it is (JSON, a snippet), in a region that scrolls when it is long: focusable, so the
 * keyboard reaches and scrolls it too (axe: scrollable-region-focusable).
 */
export function Block({ label, children }: { label: string; children: string }) {
  return (
    <Code block role="document" aria-label={label} tabIndex={0} className="block">
      {children}
    </Code>
  );
}

/**
 * A button for what cannot be undone: its press asks `question` in a dialog, with the answer `yes`
 * (focused, so Enter confirms) and Cancel. `Button` draws the first button (a WriteButton, so a
 * read-only project turns it off).
 */
export function ConfirmButton({
  children,
  question,
  yes,
  onConfirm,
  disabled,
  Button: Trigger = Button,
}: {
  children: string;
  question: string;
  yes: string;
  onConfirm: () => void;
  disabled?: boolean;
  Button?: ComponentType<{ disabled?: boolean; onClick: () => void; color?: string; variant?: string; children: ReactNode }>;
}) {
  const ask = () =>
    modals.openConfirmModal({
      title: children,
      children: <Text size="sm">{question}</Text>,
      labels: { confirm: yes, cancel: 'Cancel' },
      confirmProps: { color: 'red', 'data-autofocus': true },
      onConfirm,
    });
  return (
    <Trigger disabled={disabled} onClick={ask} color="red" variant="light">
      {children}
    </Trigger>
  );
}

/** How each state of a run, a session or a job is coloured. */
const stateColors: Record<string, string> = {
  queued: 'gray',
  pending: 'gray',
  starting: 'blue',
  running: 'blue',
  live: 'green',
  succeeded: 'green',
  completed: 'green',
  accepted: 'green',
  stopped: 'gray',
  failed: 'red',
  gone: 'red',
  cancelled: 'orange',
  rejected: 'orange',
};

/** A state as a badge (`status.pipeline`: queued, running, succeeded, failed, cancelled; a session's, a job's). */
export function StateBadge({ state }: { state: string }) {
  return (
    <Badge color={stateColors[state] ?? 'gray'} variant="dot" className={`status ${state}`}>
      {state}
    </Badge>
  );
}

/** A run's state as its badge. */
export function RunStatus({ status }: { status: string }) {
  return <StateBadge state={status} />;
}
