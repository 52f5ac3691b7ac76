import { Alert, Button, Group, Paper, Select, SimpleGrid, Skeleton, Stack, Table, Text, Title } from '@mantine/core';
import { IconChartBar, IconInfoCircle } from '@tabler/icons-react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { RouterOutputs } from '../../api.ts';
import { FormError, fieldError } from '../../components/FormErrors.tsx';
import { hrefOf } from '../../route.ts';
import { trpc } from '../../trpc.ts';

type Usage = RouterOutputs['projectOverview']['usage'];

const periods = [
  { value: '1', label: 'Today' },
  { value: '7', label: 'Last 7 days' },
  { value: '30', label: 'Last 30 days' },
  { value: '90', label: 'Last 90 days' },
  { value: '366', label: 'Last year' },
];

const number = (text: string, digits = 2) => Number(text).toLocaleString(undefined, { maximumFractionDigits: digits });

/** Bytes in the unit that keeps the figure small: 1.5 MB. */
function bytes(text: string) {
  let value = Number(text);
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toLocaleString(undefined, { maximumFractionDigits: unit ? 1 : 0 })} ${units[unit]}`;
}

/** Seconds as hours, minutes and seconds: 1 h 2 min. */
function seconds(text: string) {
  const total = Math.round(Number(text));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  if (hours) return `${hours} h ${minutes} min`;
  if (minutes) return `${minutes} min ${total % 60} s`;
  return `${total} s`;
}

/** Minor units of `currency` as money: 1234 EUR → €12.34. */
function money(minor: string, currency: string) {
  const digits = new Intl.NumberFormat(undefined, { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  return (Number(minor) / 10 ** digits).toLocaleString(undefined, { style: 'currency', currency });
}

/**
 * What the project used (`projectOverview.usage`): browser time, CPU, network and model tokens
 * over a period, in total and by day. Usage is recorded whether or not billing is on; what it
 * cost is shown only when it is.
 */
export function UsagePage({ project }: { project: string }) {
  const [days, setDays] = useState('30');
  const usage = useQuery(trpc.projectOverview.usage.queryOptions({ project, days: Number(days) }, { placeholderData: keepPreviousData }));
  const data = usage.data;
  const empty = data && data.days.length === 0;
  return (
    <Stack>
      <Group justify="space-between" align="flex-end">
        <Title order={2}>Usage</Title>
        <Select
          label="Period"
          data={periods}
          value={days}
          onChange={(value) => value && setDays(value)}
          allowDeselect={false}
          w={180}
          error={fieldError(usage.error, ['days'])}
        />
      </Group>
      <Text size="sm">What this project's browsers and agents used, as the service metered it, counted in UTC days.</Text>
      <FormError error={usage.error} fields={['days']} title="The usage could not be read" />
      {data && !data.billingEnabled && (
        <Alert variant="light" color="blue" icon={<IconInfoCircle size={18} />} title="Billing is off">
          <Text size="sm">This service does not charge for usage; it is recorded and shown here all the same.</Text>
        </Alert>
      )}
      {!data && !usage.isError && (
        <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }} aria-label="loading usage">
          {[1, 2, 3, 4].map((key) => (
            <Skeleton key={key} height={76} />
          ))}
        </SimpleGrid>
      )}
      {data && <Totals usage={data} />}
      {empty && (
        <Alert variant="light" color="gray" icon={<IconChartBar size={18} />} title="No usage in this period">
          <Stack gap="xs" align="flex-start">
            <Text size="sm">Start a browser on a session, or run a pipeline, and what it uses shows here within a minute.</Text>
            <Group>
              <Button component="a" href={hrefOf({ page: 'project', slug: project, tab: 'sessions' })}>
                Open sessions
              </Button>
              <Button component="a" variant="default" href={hrefOf({ page: 'project', slug: project, tab: 'pipelines' })}>
                Open pipelines
              </Button>
            </Group>
          </Stack>
        </Alert>
      )}
      {data && !empty && <ByDay usage={data} />}
    </Stack>
  );
}

function Totals({ usage }: { usage: Usage }) {
  const { totals } = usage;
  const figures = [
    {
      label: 'Browser time',
      value: seconds(totals.browserSeconds),
      note: `${totals.browsers} browser${totals.browsers === 1 ? '' : 's'} started`,
    },
    { label: 'CPU', value: `${number(totals.cpu)} s`, note: 'CPU seconds' },
    { label: 'Network', value: bytes(totals.network), note: 'sent and received' },
    { label: 'Model tokens', value: number(totals.tokens, 0), note: 'analysis and generation' },
  ];
  return (
    <SimpleGrid cols={{ base: 1, xs: 2, md: usage.billingEnabled ? 5 : 4 }} aria-label="usage totals">
      {figures.map((figure) => (
        <Paper key={figure.label} withBorder p="sm" role="group" aria-label={figure.label}>
          <Text size="sm">{figure.label}</Text>
          <Text fw={700} size="xl" truncate="end">
            {figure.value}
          </Text>
          <Text size="xs">{figure.note}</Text>
        </Paper>
      ))}
      {usage.billingEnabled && (
        <Paper withBorder p="sm" role="group" aria-label="Billed">
          <Text size="sm">Billed</Text>
          <Text fw={700} size="xl" truncate="end">
            {money(totals.billed, usage.currency)}
          </Text>
          <Text size="xs">from the balance</Text>
        </Paper>
      )}
    </SimpleGrid>
  );
}

function ByDay({ usage }: { usage: Usage }) {
  const [order, setOrder] = useState<'desc' | 'asc'>('desc');
  const rows = order === 'desc' ? [...usage.days].reverse() : usage.days;
  return (
    <Table aria-label="usage by day" striped layout="fixed">
      <Table.Thead>
        <Table.Tr>
          <Table.Th aria-sort={order === 'asc' ? 'ascending' : 'descending'}>
            <Button variant="subtle" size="compact-sm" onClick={() => setOrder(order === 'desc' ? 'asc' : 'desc')}>
              Day {order === 'desc' ? '↓' : '↑'}
            </Button>
          </Table.Th>
          <Table.Th>Browser time</Table.Th>
          <Table.Th visibleFrom="sm">CPU</Table.Th>
          <Table.Th visibleFrom="sm">Network</Table.Th>
          <Table.Th>Tokens</Table.Th>
          {usage.billingEnabled && <Table.Th visibleFrom="md">Billed</Table.Th>}
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((day) => (
          <Table.Tr key={day.day} aria-label={`usage on ${day.day}`}>
            <Table.Td>
              <Text size="sm" truncate="end">
                {day.day}
              </Text>
            </Table.Td>
            <Table.Td>{seconds(day.browserSeconds)}</Table.Td>
            <Table.Td visibleFrom="sm">{number(day.cpu)} s</Table.Td>
            <Table.Td visibleFrom="sm">{bytes(day.network)}</Table.Td>
            <Table.Td>{number(day.tokens, 0)}</Table.Td>
            {usage.billingEnabled && <Table.Td visibleFrom="md">{money(day.billed, usage.currency)}</Table.Td>}
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
