import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createBrowserHostActivities } from '../../../activities/browserHost.ts';
import { BrowserHost, WarmBrowser } from '../../../db/entities/index.ts';
import type { Config } from '../../config.ts';
import { installTemporalRuntime } from '../../infra/temporal.ts';
import { appendLogs, logStreams } from '../../logs/logWriter.ts';
import { BrowserPool } from './browserPool.ts';

const HEARTBEAT_MS = 5_000;

export function browserHostQueue(hostId: string) {
  return `browsers.${hostId}`;
}

/**
 * A browser host: a Temporal worker on `browsers.<hostId>` whose activities launch, check and
 * stop Chromium, plus a heartbeat row in `browser_hosts` by which hosts are picked.
 */
export async function startBrowserHost(options: { config: Config; orm: MikroORM; log: Logger; temporalAddress: string }) {
  const { config, orm } = options;
  const log = options.log.child({ component: 'browser-host', hostId: config.browsers.hostId });
  const pool = new BrowserPool({
    chromiumPath: config.chromiumPath,
    browsersDir: path.join(config.dataDir, 'browsers', config.browsers.hostId),
    warmSize: config.browsers.warmPool,
    capacity: config.browsers.perHost,
    log,
    onLog: (resourceId, projectId, entries, secrets) =>
      appendLogs(orm.em.fork(), projectId, logStreams.resource(resourceId), entries, secrets),
    onWarmReady: async ({ warmId, cdpEndpoint, pid }) => {
      await orm.em.fork().insert(WarmBrowser, { id: warmId, hostId: config.browsers.hostId, cdpEndpoint, pid, created: new Date() });
    },
    warmStillWanted: async (browsers) => {
      // One statement, one snapshot: a claim deletes the offer and inserts the resource that
      // holds the endpoint in one transaction, so a browser being claimed is never seen as neither.
      const rows = await orm.em
        .fork()
        .getConnection()
        .execute<{ key: string }[]>(
          `select id::text as key from warm_browsers where host_id = ?
         union all
         select cdp_endpoint as key from session_resources
         where host_id = ? and status in ('starting', 'running', 'stopping') and cdp_endpoint is not null`,
          [config.browsers.hostId, config.browsers.hostId],
        );
      const keys = new Set(rows.map((row) => row.key));
      return new Set(browsers.filter((b) => keys.has(b.warmId) || keys.has(b.cdpEndpoint)).map((b) => b.warmId));
    },
    warmOrphanGraceMs: config.browsers.warmOrphanGraceSeconds * 1000,
  });
  // Offers of an earlier run of this host are void: its browsers are about to be killed.
  await orm.em.fork().nativeDelete(WarmBrowser, { hostId: config.browsers.hostId });
  await pool.start();

  const heartbeat = async () => {
    const em = orm.em.fork();
    await em.upsert(BrowserHost, {
      id: config.browsers.hostId,
      address: config.browsers.hostAddress,
      capacity: config.browsers.perHost,
      running: pool.runningCount,
      heartbeatAt: new Date(),
    });
  };
  await heartbeat();
  const timer = setInterval(() => {
    heartbeat().catch((error) => log.warn({ err: error }, 'browser host heartbeat failed'));
    pool.reconcileWarm().catch((error) => log.warn({ err: error }, 'could not reconcile the warm pool'));
  }, HEARTBEAT_MS);

  installTemporalRuntime(log);
  const connection = await NativeConnection.connect({ address: options.temporalAddress });
  const worker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: browserHostQueue(config.browsers.hostId),
    activities: createBrowserHostActivities({ pool, orm, config }),
    maxConcurrentActivityTaskExecutions: Math.max(4, config.browsers.perHost * 2),
  });
  const running = worker.run();
  log.info(`browser host ${config.browsers.hostId} ready (capacity ${config.browsers.perHost}, warm pool ${config.browsers.warmPool})`);

  return {
    pool,
    async stop() {
      clearInterval(timer);
      // Best effort: at shutdown the database may already be going away.
      await orm.em
        .fork()
        .nativeDelete(WarmBrowser, { hostId: config.browsers.hostId })
        .catch(() => {});
      worker.shutdown();
      await running;
      await connection.close();
      await pool.close();
      // Mark the host gone at once rather than waiting for its heartbeat to go stale.
      await orm.em
        .fork()
        .nativeUpdate(BrowserHost, { id: config.browsers.hostId }, { heartbeatAt: new Date(0), running: 0 })
        .catch(() => {});
    },
  };
}
