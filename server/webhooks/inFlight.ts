import type { EntityManager } from '@mikro-orm/postgresql';
import { textArray } from '../../db/textArray.ts';

/**
 * Deliveries in flight per project (docs/webhooks.md): a delivery is *in flight* from the moment
 * it is given its workflow (`dispatched_at`) until it succeeds or fails for good, trying or
 * waiting for its next try. A project has at most WEBHOOK_DELIVERIES_IN_FLIGHT_PER_PROJECT; the
 * others are *queued*: their rows are written like any (so nothing is lost to a crash or a full
 * queue), without a workflow, and take a place as one frees, oldest first within what each endpoint has
 * room for. One whose workflow is gone without settling it is failed by housekeeping
 * (`settleAbandonedDeliveries` in ./events.ts), which frees its place.
 *
 * One endpoint holds at most half of a project's places (rounded up): an endpoint that is down
 * keeps each of its deliveries in flight for the whole retry period (25 hours), and must not hold
 * up the deliveries of the project's other endpoints that long.
 */

/** The most one endpoint holds of a project's `limit` places. */
export function placesPerEndpoint(limit: number) {
  return Math.ceil(limit / 2);
}

/**
 * Gives queued deliveries of these projects the places free in their project (each endpoint's
 * oldest up to its room, then the oldest of those), and answers the ids given one: their
 * workflows are the caller's to start. Each project is decided under a lock of its own, held
 * until its claims commit, so two dispatches never give one place twice.
 */
export async function claimDeliveryPlaces(em: EntityManager, limit: number, projectIds: readonly string[]): Promise<string[]> {
  const claimed: string[] = [];
  for (const projectId of new Set(projectIds)) {
    const ids = await em.fork().transactional(async (tx) => {
      const connection = tx.getConnection();
      const context = tx.getTransactionContext();
      await connection.execute('select pg_advisory_xact_lock(hashtext(?))', [`webhook_deliveries_of:${projectId}`], 'run', context);
      const inFlight = await connection.execute<{ endpoint_id: string; n: string }[]>(
        `select endpoint_id, count(*) as n from webhook_deliveries
         where project_id = ? and status = 'pending' and dispatched_at is not null group by endpoint_id`,
        [projectId],
        'all',
        context,
      );
      const total = inFlight.reduce((sum, row) => sum + Number(row.n), 0);
      if (total >= limit) return [];
      // Each endpoint's oldest, as many as it has room for, then the oldest of those across the
      // project: however long one endpoint's queue, it cannot hide another's behind it.
      const queued = await connection.execute<{ id: string }[]>(
        `with held as (
           select endpoint_id, count(*) as n from webhook_deliveries
           where project_id = ? and status = 'pending' and dispatched_at is not null group by endpoint_id
         ), ranked as (
           select d.id, d.created, coalesce(held.n, 0) + row_number() over (partition by d.endpoint_id order by d.created, d.id) as place
           from webhook_deliveries d left join held on held.endpoint_id = d.endpoint_id
           where d.project_id = ? and d.status = 'pending' and d.dispatched_at is null
         )
         select id from ranked where place <= ? order by created, id limit ?`,
        [projectId, projectId, placesPerEndpoint(limit), limit - total],
        'all',
        context,
      );
      const picked = queued.map((row) => row.id);
      if (picked.length) {
        await connection.execute(
          'update webhook_deliveries set dispatched_at = now() where id::text = any(?)',
          [textArray(picked)],
          'run',
          context,
        );
      }
      return picked;
    });
    claimed.push(...ids);
  }
  return claimed;
}

/** The projects these deliveries belong to. */
export async function projectsOfDeliveries(em: EntityManager, deliveryIds: readonly string[]): Promise<string[]> {
  if (!deliveryIds.length) return [];
  const rows = await em
    .fork()
    .getConnection()
    .execute<{ project_id: string }[]>(
      'select distinct project_id from webhook_deliveries where id::text = any(?)',
      [textArray(deliveryIds)],
      'all',
    );
  return rows.map((row) => row.project_id);
}

/** Projects with queued deliveries (a backstop for housekeeping: a dispatch that was lost to a crash). */
export async function projectsWithQueuedDeliveries(em: EntityManager, limit = 500): Promise<string[]> {
  const rows = await em
    .fork()
    .getConnection()
    .execute<{ project_id: string }[]>(
      `select distinct project_id from webhook_deliveries where status = 'pending' and dispatched_at is null limit ?`,
      [limit],
      'all',
    );
  return rows.map((row) => row.project_id);
}
