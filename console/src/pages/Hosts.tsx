import { useQuery } from '@tanstack/react-query';

import { Loaded, when } from '../components/parts.tsx';
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
      <h1>Browser hosts</h1>
      <Loaded query={hosts}>
        {(rows) =>
          rows.length === 0 ? (
            <p className="muted">No host has registered.</p>
          ) : (
            <table aria-label="browser hosts">
              <thead>
                <tr>
                  <th>Host</th>
                  <th>State</th>
                  <th>Address</th>
                  <th>Load</th>
                  <th>Warm browsers</th>
                  <th>Warm pool: target (floor–max)</th>
                  <th>Warm hit rate</th>
                  <th>Last heartbeat</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((host) => (
                  <tr key={host.id}>
                    <td>
                      <code>{host.id}</code>
                    </td>
                    <td>
                      <span className={`status ${host.state === 'live' ? 'running' : host.state === 'gone' ? 'failed' : ''}`}>
                        {host.state}
                      </span>
                      {host.drainingSince && <span className="muted"> since {when(host.drainingSince)}</span>}
                    </td>
                    <td>
                      {host.address}
                      {host.relayPort ? `:${host.relayPort}` : ''}
                    </td>
                    <td>
                      <meter min={0} max={host.capacity} value={host.load} aria-label={`load of ${host.id}`} /> {host.load} /{' '}
                      {host.capacity}
                    </td>
                    <td>{host.warmBrowsers.count}</td>
                    <td>
                      {host.warmPool ? (
                        <>
                          {host.warmPool.target} ({host.warmPool.floor}–{host.warmPool.max})
                          {host.warmPool.launching > 0 && <span className="muted"> · {host.warmPool.launching} launching</span>}
                        </>
                      ) : (
                        <span className="muted">not reported</span>
                      )}
                    </td>
                    <td>
                      {host.warmPool ? (
                        <>
                          {percent(host.warmPool.hitRate.recent)}{' '}
                          <span className="muted">
                            last {host.warmPool.claims.recent.windowSeconds} s ({host.warmPool.claims.recent.warm}/
                            {host.warmPool.claims.recent.claims}), {percent(host.warmPool.hitRate.sinceStart)} since start (
                            {host.warmPool.claims.sinceStart.warm}/{host.warmPool.claims.sinceStart.claims})
                          </span>
                        </>
                      ) : (
                        <span className="muted">—</span>
                      )}
                    </td>
                    <td>{when(host.lastHeartbeat)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
    </>
  );
}
