import type { EntityManager } from '@mikro-orm/postgresql';
import type { WarmPoolStatus } from '../../../db/entities/BrowserHost.ts';
import { BrowserHost } from '../../../db/entities/index.ts';
import { textArray } from '../../../db/textArray.ts';
import { HOST_HEARTBEAT_STALE_MS } from '../sessions/browserSessions.ts';
import { activeResourceStatuses } from '../sessions/resourceStatus.ts';

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
  /** The launch signatures the host keeps warm (its default settings and those started there lately). */
  warmSignatures: string[];
  /**
   * The warm pool as the host last reported it: its floor, ceiling and target now (from the recent
   * rate of starts), its size, and its hit rate. Null for a host that does not report it.
   */
  warmPool: (WarmPoolStatus & { hitRate: { recent: number | null; sinceStart: number | null } }) | null;
  lastHeartbeat: Date;
  /** Since when the host drains (SIGTERM): it takes no new browsers; null while it serves. */
  drainingSince: Date | null;
  /**
   * `gone`: no heartbeat for HOST_HEARTBEAT_STALE_MS; `draining`: heartbeating but taking no new
   * browsers. No start picks either.
   */
  state: 'live' | 'draining' | 'gone';
};

/** Every host that ever heartbeated, with its load and warm browsers, by id. Three queries, none per host. */
export async function listHosts(em: EntityManager, now = Date.now()): Promise<HostOverview[]> {
  const connection = em.getConnection();
  const context = em.getTransactionContext();
  const hosts = await em.find(BrowserHost, {}, { orderBy: { id: 'asc' } });
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
  return hosts.map((host) => {
    const bySignature = warmOf.get(host.id) ?? {};
    const fresh = now - host.heartbeatAt.getTime() < HOST_HEARTBEAT_STALE_MS;
    return {
      id: host.id,
      address: host.address,
      relayPort: host.relayPort ?? null,
      capacity: host.capacity,
      load: load.get(host.id) ?? 0,
      warmBrowsers: { count: Object.values(bySignature).reduce((sum, n) => sum + n, 0), bySignature },
      warmSignatures: host.warmSignatures ?? [],
      warmPool: host.warmPool
        ? {
            ...host.warmPool,
            hitRate: { recent: hitRate(host.warmPool.claims.recent), sinceStart: hitRate(host.warmPool.claims.sinceStart) },
          }
        : null,
      lastHeartbeat: host.heartbeatAt,
      drainingSince: host.drainingSince ?? null,
      state: !fresh ? 'gone' : host.drainingSince ? 'draining' : 'live',
    };
  });
}

/** Claims served warm over all claims; null when there were none. */
function hitRate(claims: { claims: number; warm: number }) {
  return claims.claims > 0 ? claims.warm / claims.claims : null;
}
