import { Context } from '@temporalio/activity';
import { WebhookDelivery } from '../db/entities/index.ts';
import { checkDestination } from '../server/webhooks/destination.ts';
import { dispatchDeliveries } from '../server/webhooks/events.ts';
import { openWebhookSecret } from '../server/webhooks/secrets.ts';
import { delivered, type SendOutcome, sendWebhook } from '../server/webhooks/send.ts';
import type { WebhookActivities, WebhookAttemptOutcome } from '../workflows/contracts/webhooks.ts';
import type { ActivityDeps } from './deps.ts';

const USER_AGENT = 'browserflow-webhooks/1';

/** The try of `webhookDeliveryWorkflow` (workflows/webhooks.ts), on the control queue. */
export function createWebhookActivities({ orm, config, serviceSecret, log }: ActivityDeps) {
  const emitter = { config, log, temporal: () => Context.current().client };
  /** A delivery left flight (or was found out of it): its place goes to the project's next queued one. */
  const freePlace = (projectId: string) => dispatchDeliveries(orm.em.fork(), emitter, [projectId]);

  return {
    async attemptWebhookDelivery(deliveryId: string, nextDelaySeconds: number | null): Promise<WebhookAttemptOutcome> {
      const outcome = await attempt(deliveryId, nextDelaySeconds);
      if (outcome.projectId && outcome.result === 'done') await freePlace(outcome.projectId);
      return outcome.result;
    },

    async markWebhookDeliveryFailed(deliveryId: string, reason: string) {
      const rows = await orm.em
        .fork()
        .getConnection()
        .execute<{ project_id: string }[]>(
          `update webhook_deliveries set status = 'failed', failure = ?, next_attempt_at = null, updated = now()
           where id = ? and status = 'pending' returning project_id`,
          [failureText(reason), deliveryId],
          'all',
        );
      if (rows[0]) await freePlace(rows[0].project_id);
    },
  } satisfies WebhookActivities;

  /** One try; answers the delivery's project (null: the delivery is gone) with the outcome. */
  async function attempt(
    deliveryId: string,
    nextDelaySeconds: number | null,
  ): Promise<{ result: WebhookAttemptOutcome; projectId: string | null }> {
    const em = orm.em.fork();
    const delivery = await em.findOne(WebhookDelivery, { id: deliveryId }, { populate: ['endpoint'] });
    if (!delivery) return { result: 'done', projectId: null };
    const done = { result: 'done' as const, projectId: delivery.project.id };
    if (delivery.status !== 'pending') return done;
    const endpoint = delivery.endpoint;
    const giveUp = (failure: string) => {
      delivery.status = 'failed';
      delivery.failure = failureText(failure);
      delivery.nextAttemptAt = null;
    };
    const at = new Date();
    let outcome: SendOutcome;
    if (!endpoint.enabled) {
      giveUp('the endpoint was disabled');
      await em.flush();
      return done;
    }
    const secret = openWebhookSecret(serviceSecret, endpoint.secret);
    if (!secret) {
      // Sealed under another service secret: no try can sign it.
      giveUp(
        'the endpoint’s secret cannot be opened (the service secret changed); give it a new one with POST …/webhooks/{webhookId}/secret',
      );
      await em.flush();
      return done;
    }
    const url = new URL(endpoint.url);
    const checked = await checkDestination(config, url);
    if (!checked.ok) {
      outcome = { statusCode: null, error: `refused: ${checked.reason}`, durationMs: 0 };
    } else {
      outcome = await sendWebhook({
        url,
        destination: checked.destination,
        secret,
        messageId: delivery.messageId,
        body: JSON.stringify(delivery.payload),
        timeoutMs: config.webhooks.timeoutSeconds * 1000,
        userAgent: USER_AGENT,
      });
    }
    delivery.attempts = [...delivery.attempts, { at: at.toISOString(), ...outcome }];
    if (delivered(outcome)) {
      delivery.status = 'succeeded';
      delivery.nextAttemptAt = null;
    } else if (nextDelaySeconds === null) {
      giveUp(
        `no success after ${delivery.attempts.length} ${delivery.attempts.length === 1 ? 'try' : 'tries'}: ${outcome.error ?? `answered ${outcome.statusCode}`}`,
      );
    } else {
      delivery.nextAttemptAt = new Date(Date.now() + nextDelaySeconds * 1000);
    }
    await em.flush();
    if (delivery.status === 'pending') {
      log.info(
        { deliveryId, statusCode: outcome.statusCode, error: outcome.error, nextDelaySeconds },
        'webhook delivery failed; will retry',
      );
    }
    return delivery.status === 'pending' ? { result: 'retry', projectId: delivery.project.id } : done;
  }
}

/** `failure` holds at most 500 characters (its column). */
function failureText(text: string) {
  return text.length > 500 ? `${text.slice(0, 499)}…` : text;
}
