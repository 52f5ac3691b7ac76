import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Logger } from 'pino';
import { WebhookEndpoint } from '../../db/entities/index.ts';
import { type WebhookDeliveryWorkflow, webhookDeliveryWorkflowType } from '../../workflows/contracts/webhooks.ts';
import { workflowIds } from '../../workflows/contracts/workflowIds.ts';
import type { Config } from '../config.ts';
import { workflowIsGone } from '../infra/workflowErrors.ts';
import { claimDeliveryPlaces, projectsOfDeliveries } from './inFlight.ts';

/**
 * Webhook events (docs/webhooks.md). An event becomes one delivery row per enabled endpoint of the
 * project that wants it, then one workflow per row sends it with retries, once the row has a place
 * among its project's deliveries in flight (./inFlight.ts). The rows are written
 * first (in the caller's transaction, where it has one), so an event is never lost to a failed
 * start: a delivery whose workflow never started is started by housekeeping. Each event has a key
 * (`run.finished:<runId>`): recorded twice (an activity retried), it is delivered once.
 */

export const webhookEvents = [
  'run.finished',
  'function.finished',
  'analysis.finished',
  'generation.finished',
  'session.stopped',
  'funds.low',
  'funds.exhausted',
] as const;
export type WebhookEvent = (typeof webhookEvents)[number];

export type EventRecord = {
  projectIds: string[];
  event: WebhookEvent;
  /** Unique per event: the same key recorded again adds no delivery. */
  key: string;
  data: Record<string, unknown>;
};

/** The body every endpoint receives: the Standard Webhooks shape. */
export function eventPayload(event: WebhookEvent, data: Record<string, unknown>, at = new Date()) {
  return { type: event, timestamp: at.toISOString(), data };
}

export function newMessageId() {
  return `msg_${randomUUID().replaceAll('-', '')}`;
}

/** Writes the deliveries of one event; answers the ids of those it added. */
export async function recordWebhookEvent(em: EntityManager, record: EventRecord): Promise<string[]> {
  if (!record.projectIds.length) return [];
  const endpoints = await em.find(
    WebhookEndpoint,
    { project: { $in: record.projectIds }, enabled: true },
    { fields: ['id', 'project', 'events'] },
  );
  const wanting = endpoints.filter((endpoint) => endpoint.events.includes(record.event));
  if (!wanting.length) return [];
  const at = new Date();
  const payload = eventPayload(record.event, record.data, at);
  const rows = wanting.map((endpoint) => ({
    id: randomUUID(),
    project_id: endpoint.project.id,
    endpoint_id: endpoint.id,
    message_id: newMessageId(),
    event_key: record.key,
    event: record.event,
    payload: JSON.stringify(payload),
    status: 'pending',
    attempts: '[]',
    created: at,
    updated: at,
  }));
  const columns = Object.keys(rows[0] as object);
  const values = rows.map(() => `(${columns.map(() => '?').join(', ')})`).join(', ');
  const inserted = (await em.getConnection().execute(
    `insert into webhook_deliveries (${columns.join(', ')}) values ${values} on conflict (endpoint_id, event_key) do nothing returning id`,
    rows.flatMap((row) => Object.values(row)),
    'all',
    em.getTransactionContext(),
  )) as { id: string }[];
  return inserted.map((row) => row.id);
}

/** Starts the workflows of these deliveries; one already started (or done) is left alone. */
export async function startWebhookDeliveries(temporal: Client, config: Config, deliveryIds: string[]) {
  const retry = {
    initialSeconds: config.webhooks.retryInitialSeconds,
    maxIntervalSeconds: config.webhooks.retryMaxIntervalSeconds,
    giveUpAfterSeconds: config.webhooks.retryHours * 3600,
  };
  await Promise.all(
    deliveryIds.map(async (deliveryId) => {
      try {
        await temporal.workflow.start<WebhookDeliveryWorkflow>(webhookDeliveryWorkflowType, {
          taskQueue: config.temporal.taskQueue,
          workflowId: workflowIds.webhook(deliveryId),
          // Once per delivery; again only after a workflow that failed (it marks its row failed).
          workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
          args: [{ deliveryId, retry }],
        });
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      }
    }),
  );
}

export type WebhookEmitter = { config: Config; log?: Logger; temporal: Client | (() => Client) };

/**
 * Records an event and starts its deliveries, as many as their projects have places in flight
 * for (./inFlight.ts); the others wait their turn, queued. A failure to record is thrown: the
 * caller (an activity) is retried, and the event's key makes the retry add nothing twice. A
 * failure to start is only logged: the rows are there, and housekeeping starts them.
 */
export async function emitWebhookEvent(em: EntityManager, emitter: WebhookEmitter, record: EventRecord) {
  const ids = await recordWebhookEvent(em, record);
  if (ids.length) await dispatchDeliveries(em, emitter, record.projectIds);
}

/** Starts deliveries recorded in a transaction that has committed since, places allowing. Never fails its caller. */
export async function startDeliveries(em: EntityManager, emitter: WebhookEmitter, ids: string[]) {
  if (!ids.length) return;
  try {
    await dispatchDeliveries(em, emitter, await projectsOfDeliveries(em, ids));
  } catch (error) {
    emitter.log?.warn({ err: error, deliveries: ids.length }, 'webhook deliveries not started; housekeeping starts them later');
  }
}

/**
 * Gives these projects' queued deliveries the places in flight that are free, and starts their
 * workflows; called when deliveries are recorded and whenever one leaves flight. Never fails its
 * caller: a delivery left queued, or claimed without its workflow, is housekeeping's.
 */
export async function dispatchDeliveries(em: EntityManager, emitter: WebhookEmitter, projectIds: readonly string[]) {
  if (!projectIds.length) return;
  let claimed: string[] = [];
  try {
    claimed = await claimDeliveryPlaces(em, emitter.config.quotas.webhookDeliveriesInFlightPerProject, projectIds);
    if (!claimed.length) return;
    const temporal = typeof emitter.temporal === 'function' ? emitter.temporal() : emitter.temporal;
    await startWebhookDeliveries(temporal, emitter.config, claimed);
  } catch (error) {
    emitter.log?.warn({ err: error, deliveries: claimed.length }, 'webhook deliveries not started; housekeeping starts them later');
  }
}

/** Deliveries given a place but never tried, longer than `graceSeconds` ago: their workflow did not start. */
export async function unstartedDeliveries(em: EntityManager, graceSeconds: number, limit = 500) {
  const rows = (await em
    .getConnection()
    .execute(
      `select id from webhook_deliveries where status = 'pending' and dispatched_at < ? and next_attempt_at is null and jsonb_array_length(attempts) = 0 order by dispatched_at limit ?`,
      [new Date(Date.now() - graceSeconds * 1000), limit],
    )) as { id: string }[];
  return rows.map((row) => row.id);
}

/** How long past its due time a try may be late before housekeeping asks whether anyone still makes it. */
const OVERDUE_SECONDS = 10 * 60;
/** Past the retry period by this much, no workflow is still trying a delivery, whatever Temporal says. */
const PAST_RETRIES_MARGIN_HOURS = 1;
const GONE_FAILURE = 'its delivery workflow ended without settling it (terminated, or lost by Temporal); a resend starts over';
const TOO_OLD_FAILURE = 'still pending after the whole retry period; no workflow is trying it any more; a resend starts over';

/**
 * Fails the deliveries in flight that nothing works on any more, and answers their projects (whose
 * places are free now). Tried at least once, with their next try overdue: failed when Temporal
 * has no running workflow for them (terminated, or its history lost); any answer other than that
 * leaves them be. In flight longer than the retry period and a margin, tried or not: failed
 * without asking, as no workflow keeps trying that long. Those never tried, younger, are
 * `unstartedDeliveries`'s: they get their workflow again.
 */
export async function settleAbandonedDeliveries(em: EntityManager, emitter: WebhookEmitter, limit = 500) {
  const connection = em.getConnection();
  const pastRetries = emitter.config.webhooks.retryHours + PAST_RETRIES_MARGIN_HOURS;
  const rows = await connection.execute<{ id: string; too_old: boolean }[]>(
    `select id, dispatched_at < now() - make_interval(secs => ?) as too_old from webhook_deliveries
     where status = 'pending' and dispatched_at is not null
       and (dispatched_at < now() - make_interval(secs => ?)
         or (jsonb_array_length(attempts) > 0 and coalesce(next_attempt_at, dispatched_at) < now() - make_interval(secs => ?)))
     order by dispatched_at limit ?`,
    [pastRetries * 3600, pastRetries * 3600, OVERDUE_SECONDS, limit],
    'all',
  );
  if (!rows.length) return [];
  const temporal = typeof emitter.temporal === 'function' ? emitter.temporal() : emitter.temporal;
  const failures = new Map<string, string>();
  for (const row of rows) {
    if (row.too_old) failures.set(row.id, TOO_OLD_FAILURE);
    else if (!(await workflowRuns(temporal, workflowIds.webhook(row.id)))) failures.set(row.id, GONE_FAILURE);
  }
  const projects = new Set<string>();
  for (const [id, failure] of failures) {
    // Only while still pending: its workflow may have settled it since it was read.
    const settled = await connection.execute<{ project_id: string }[]>(
      `update webhook_deliveries set status = 'failed', failure = ?, next_attempt_at = null, updated = now()
       where id = ? and status = 'pending' returning project_id`,
      [failure, id],
      'all',
    );
    if (settled[0]) projects.add(settled[0].project_id);
  }
  if (failures.size) emitter.log?.warn({ deliveries: failures.size }, 'failed webhook deliveries that no workflow was working on');
  return [...projects];
}

/** Whether the workflow of this id runs; an engine that cannot say counts as yes (nothing is settled on a guess). */
async function workflowRuns(temporal: Client, workflowId: string) {
  try {
    const description = await temporal.workflow.getHandle(workflowId).describe();
    return description.status.name === 'RUNNING';
  } catch (error) {
    return !workflowIsGone(error);
  }
}
