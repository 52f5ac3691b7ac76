import { Context } from '@temporalio/activity';
import { PostgresBlobStore } from '../server/blobs/blobStore.ts';
import { deleteExpiredDownloads } from '../server/browsers/downloads/downloadFiles.ts';
import { RECORDINGS_ROOT } from '../server/browsers/recordings/recordingFiles.ts';
import { dispatchDeliveries, settleAbandonedDeliveries, startWebhookDeliveries, unstartedDeliveries } from '../server/webhooks/events.ts';
import { projectsWithQueuedDeliveries } from '../server/webhooks/inFlight.ts';
import type { HousekeepingActivities } from '../workflows/contracts/periodic.ts';
import type { ActivityDeps } from './deps.ts';

/**
 * Housekeeping, hourly. Rows that only ever matter until they expire: sign-in sessions (a 2FA-pending one is made at
 * every login with 2FA on), one-time mail tokens, external registrations and links waiting for
 * confirmation (they hold a provider's e-mail and names), kept a day past expiry so a late request
 * still gets "expired" rather than "unknown" for a while; rate-limit windows, which count as
 * empty once ended; webhook deliveries a month old; run screenshots, browser downloads and recordings past their retention.
 * Before that, it fails the webhook deliveries in flight that no workflow works on any more.
 */
const expiredTables = [
  { table: 'auth_sessions', column: 'expires_at', keep: "interval '1 day'" },
  { table: 'one_time_tokens', column: 'expires_at', keep: "interval '1 day'" },
  { table: 'external_registrations', column: 'expires_at', keep: "interval '1 day'" },
  { table: 'external_link_requests', column: 'expires_at', keep: "interval '1 day'" },
  { table: 'rate_limit_buckets', column: 'reset_at', keep: "interval '1 hour'" },
  // The webhook delivery log keeps a month (docs/webhooks.md); one still queued is kept until sent.
  // One in flight that old is settled first (settleAbandonedDeliveries), so its place is freed.
  { table: 'webhook_deliveries', column: 'created', keep: "interval '30 days'", unless: "status = 'pending' and dispatched_at is null" },
] as const;

/** A webhook delivery given its place this long ago and never tried lost its start (docs/webhooks.md). */
const UNSTARTED_DELIVERY_GRACE_SECONDS = 5 * 60;

export function createHousekeepingActivities({ orm, config, log }: ActivityDeps) {
  return {
    /** Deletes what expired longer ago than its table keeps it; answers how many rows of each table went. */
    async deleteExpiredRows() {
      const connection = orm.em.getConnection();
      // Temporal is asked only when a delivery needs it (a run outside an activity, as in tests, may need none).
      const emitter = { config, log, temporal: () => Context.current().client };
      // Deliveries in flight that no workflow works on any more hold places until failed here.
      const freed = await settleAbandonedDeliveries(orm.em.fork(), emitter);
      const deleted: Record<string, number> = {};
      // Run screenshots keep RUN_SCREENSHOT_RETENTION_DAYS (an integer, checked at start-up).
      const screenshots = { table: 'run_screenshots', column: 'created', keep: `interval '${config.screenshots.retentionDays} days'` };
      for (const entry of [...expiredTables, screenshots]) {
        const { table, column, keep } = entry;
        const unless = 'unless' in entry ? ` and not (${entry.unless})` : '';
        const result = await connection.execute(`delete from ${table} where ${column} < now() - ${keep}${unless}`, [], 'run');
        deleted[table] = (result as { affectedRows?: number }).affectedRows ?? 0;
      }
      // Browser downloads keep DOWNLOAD_RETENTION_DAYS: their rows and their files in the blob store.
      deleted.browser_downloads = await deleteExpiredDownloads(orm, new PostgresBlobStore(orm), config.downloads.retentionDays);
      // Browser recordings keep RECORDING_RETENTION_DAYS from each part's write (docs/browsers.md, Recordings).
      const recordingsBefore = new Date(Date.now() - config.recordings.retentionDays * 86_400_000);
      deleted.recordings = await new PostgresBlobStore(orm).deleteOlder(RECORDINGS_ROOT, recordingsBefore);
      if (Object.values(deleted).some((count) => count > 0)) log.info({ deleted }, 'deleted expired rows');
      // And the webhook deliveries whose workflow never started (Temporal was away at the event).
      const unstarted = await unstartedDeliveries(orm.em.fork(), UNSTARTED_DELIVERY_GRACE_SECONDS);
      if (unstarted.length) {
        await startWebhookDeliveries(Context.current().client, config, unstarted);
        log.warn({ deliveries: unstarted.length }, 'started webhook deliveries whose workflow had not started');
      }
      // And queued ones whose project has a free place that no dispatch gave (one lost to a crash).
      const queued = await projectsWithQueuedDeliveries(orm.em.fork());
      await dispatchDeliveries(orm.em.fork(), emitter, [...new Set([...freed, ...queued])]);
      return deleted;
    },
  } satisfies HousekeepingActivities;
}
