import { Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Loaded, StateBadge, when } from '../components/parts.tsx';
import { trpc } from '../trpc.ts';

/** A hit rate as a percentage; a dash when no start could take a warm browser. */
function percent(rate: number | null) {
  return rate === null ? '—' : `${Math.round(rate * 100)} %`;
}

/** For global admins: the browser hosts, their load against capacity, warm browsers and heartbeat. */
export function HostsPage() {
  const hosts = useQuery(trpc.admin.hosts.queryOptions(undefined, { refetchInterval: 5_000 }));
  return (
    <>
      <Title order={1} size="h2" mb="md">
        Browser hosts
      </Title>
      <Loaded query={hosts}>
        {(rows) =>
          rows.length === 0 ? (
            <Text size="sm" c="dimmed">
              No host has registered.
            </Text>
          ) : (
            // Wider than a phone: it scrolls inside its own box.
            <Table.ScrollContainer minWidth={0} type="native" tabIndex={0}>
              <Table striped aria-label="browser hosts" verticalSpacing="xs">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Host</Table.Th>
                    <Table.Th>State</Table.Th>
                    <Table.Th>Address</Table.Th>
                    <Table.Th>Load</Table.Th>
                    <Table.Th>Warm browsers</Table.Th>
                    <Table.Th>Warm pool: target (floor–max)</Table.Th>
                    <Table.Th>Warm hit rate</Table.Th>
                    <Table.Th>Last heartbeat</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {rows.map((host) => (
                    <Table.Tr key={host.id}>
                      <Table.Td>
                        <code>{host.id}</code>
                      </Table.Td>
                      <Table.Td>
                        <StateBadge state={host.state} />
                        {host.drainingSince && (
                          <Text span size="sm" c="dimmed">
                            {' '}
                            since {when(host.drainingSince)}
                          </Text>
                        )}
                      </Table.Td>
                      <Table.Td>
                        {host.address}
                        {host.relayPort ? `:${host.relayPort}` : ''}
                      </Table.Td>
                      <Table.Td>
                        <meter min={0} max={host.capacity} value={host.load} aria-label={`load of ${host.id}`} /> {host.load} /{' '}
                        {host.capacity}
                      </Table.Td>
                      <Table.Td>{host.warmBrowsers.count}</Table.Td>
                      <Table.Td>
                        {host.warmPool ? (
                          <>
                            {host.warmPool.target} ({host.warmPool.floor}–{host.warmPool.max})
                            {host.warmPool.launching > 0 && (
                              <Text span size="sm" c="dimmed">
                                {' '}
                                · {host.warmPool.launching} launching
                              </Text>
                            )}
                          </>
                        ) : (
                          <Text span size="sm" c="dimmed">
                            not reported
                          </Text>
                        )}
                      </Table.Td>
                      <Table.Td>
                        {host.warmPool ? (
                          <>
                            {percent(host.warmPool.hitRate.recent)}{' '}
                            <Text span size="sm" c="dimmed">
                              last {host.warmPool.claims.recent.windowSeconds} s ({host.warmPool.claims.recent.warm}/
                              {host.warmPool.claims.recent.claims}), {percent(host.warmPool.hitRate.sinceStart)} since start (
                              {host.warmPool.claims.sinceStart.warm}/{host.warmPool.claims.sinceStart.claims})
                            </Text>
                          </>
                        ) : (
                          <Text span size="sm" c="dimmed">
                            —
                          </Text>
                        )}
                      </Table.Td>
                      <Table.Td>{when(host.lastHeartbeat)}</Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          )
        }
      </Loaded>
    </>
  );
}
