import type { EntityManager } from '@mikro-orm/postgresql';
import { textArray } from '../../db/textArray.ts';
import { HOST_HEARTBEAT_STALE_MS } from './browserSessions.ts';
import { activeResourceStatuses } from './resourceStatus.ts';

/** One browser host as an operator sees it (GET /api/admin/hosts). */
export type HostOverview = {
  id: string;
  address: string;
  /** Where the host's relay listens on `address`; null for a host without a relay. */
  relayPort: number | null;
  capacity: number;
  /** Its active resources (starting, running, stopping): what counts against `capacity`. */
  load: number;
  warmBrowsers: { count: number; bySignature: Record<string, number> };
  lastHeartbeat: Date;
  /** `gone`: no heartbeat for HOST_HEARTBEAT_STALE_MS, so no start picks it. */
  state: 'live' | 'gone';
};

/**
 * Every host that ever heartbeated, with its load and warm browsers, by id. Three queries, none per
 * host. The host row is read whole (`select *`): a relay port column (`relay_port`) is shown when
 * the schema has it and null before.
 */
export async function listHosts(em: EntityManager, now = Date.now()): Promise<HostOverview[]> {
  const connection = em.getConnection();
  const context = em.getTransactionContext();
  const hosts = await connection.execute<Record<string, unknown>[]>('select * from browser_hosts order by id', [], 'all', context);
  const loads = await connection.execute<{ host_id: string; n: string }[]>(
    'select host_id, count(*) as n from session_resources where status = any(?) and host_id is not null group by host_id',
    [textArray(activeResourceStatuses)],
    'all',
    context,
  );
  const warm = await connection.execute<{ host_id: string; launch_signature: string; n: string }[]>(
    'select host_id, launch_signature, count(*) as n from warm_browsers group by host_id, launch_signature',
    [],
    'all',
    context,
  );
  const load = new Map(loads.map((row) => [row.host_id, Number(row.n)]));
  const warmOf = new Map<string, Record<string, number>>();
  for (const row of warm) {
    const bySignature = warmOf.get(row.host_id) ?? {};
    bySignature[row.launch_signature] = Number(row.n);
    warmOf.set(row.host_id, bySignature);
  }
  return hosts.map((row) => {
    const id = String(row.id);
    const lastHeartbeat = new Date(row.heartbeat_at as string | Date);
    const bySignature = warmOf.get(id) ?? {};
    const relayPort = typeof row.relay_port === 'number' ? row.relay_port : null;
    return {
      id,
      address: String(row.address),
      relayPort,
      capacity: Number(row.capacity),
      load: load.get(id) ?? 0,
      warmBrowsers: { count: Object.values(bySignature).reduce((sum, n) => sum + n, 0), bySignature },
      lastHeartbeat,
      // TODO(draining): once browser_hosts has its draining state, a live host that drains shows `draining`.
      state: now - lastHeartbeat.getTime() < HOST_HEARTBEAT_STALE_MS ? 'live' : 'gone',
    };
  });
}
