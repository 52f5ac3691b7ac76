import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { BrowserSession } from '../../../db/entities/index.ts';
import { BrowserHost } from '../../../db/entities/index.ts';
import type { Config } from '../../config.ts';
import { LimitReached, ServiceUnavailable } from '../../errors.ts';
import type { Plan } from '../../pipelines/engine/plan.ts';
import { planHasNodeOf } from '../../pipelines/engine/registry.ts';
import { HOST_HEARTBEAT_STALE_MS } from '../sessions/browserSessions.ts';
import { CallQueue } from './callQueue.ts';

/**
 * Calls in contexts (docs/browsers.md, Contexts for calls), the api's side: which runs are calls,
 * the host a project's calls go to, and the per-project queue they wait in.
 */

/** Nodes a context cannot serve: a download needs the browser's own download folder (acceptDownloads is off in contexts). */
const OWN_BROWSER_NODES = ['page.download'] as const;

/**
 * Whether a run that does not use a session's running browser runs as a call, in a fresh context
 * of its project's browser, rather than in a browser of its own. A run keeps a browser of its own
 * when it needs what only a whole browser has: a proxy (set at launch), a persisted profile, a
 * recording (`record` on the run or the session), or a `page.download` node.
 */
export function runsAsCall(session: BrowserSession, plan: Plan | null, record: boolean) {
  if (session.proxy || session.storedProxy || session.persist || session.record || record) return false;
  return !planHasNodeOf(plan, OWN_BROWSER_NODES);
}

const queues = new WeakMap<Config['calls'], CallQueue>();

/** The call queue of this process for `config` (one per api, so one per test stack). */
export function callQueueOf(config: Pick<Config, 'calls'>) {
  let queue = queues.get(config.calls);
  if (!queue) {
    queue = new CallQueue(config.calls);
    queues.set(config.calls, queue);
  }
  return queue;
}

/**
 * The host a project's calls go to: of the live hosts that are not draining, the one that ranks
 * first for the project (rendezvous hashing), so its calls meet its warm browser there while the
 * set of hosts stays the same, and a host that goes only moves the projects it had.
 */
export async function callHostFor(em: EntityManager, projectId: string) {
  const hosts = await em.find(
    BrowserHost,
    { heartbeatAt: { $gt: new Date(Date.now() - HOST_HEARTBEAT_STALE_MS) } },
    { fields: ['id', 'drainingSince'] },
  );
  if (!hosts.length) throw new ServiceUnavailable('No browser host is running');
  const serving = hosts.filter((host) => !host.drainingSince);
  if (!serving.length) throw new LimitReached('browser_hosts_full', 'Every browser host is draining; try again later');
  const rank = (hostId: string) => createHash('sha256').update(`${projectId}/${hostId}`).digest().readUInt32BE(0);
  return serving.map((host) => host.id).sort((a, b) => rank(b) - rank(a) || a.localeCompare(b))[0] as string;
}
