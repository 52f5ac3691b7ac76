import { WebhookDelivery } from '../db/entities/index.ts';
import { checkDestination } from '../server/webhooks/destination.ts';
import { openWebhookSecret } from '../server/webhooks/secrets.ts';
import { delivered, type SendOutcome, sendWebhook } from '../server/webhooks/send.ts';
import type { WebhookActivities, WebhookAttemptOutcome } from '../workflows/contracts/webhooks.ts';
import type { ActivityDeps } from './deps.ts';

const USER_AGENT = 'browserflow-webhooks/1';

/** The try of `webhookDeliveryWorkflow` (workflows/webhooks.ts), on the control queue. */
export function createWebhookActivities({ orm, config, serviceSecret, log }: ActivityDeps) {
  return {
    async attemptWebhookDelivery(deliveryId: string, nextDelaySeconds: number | null): Promise<WebhookAttemptOutcome> {
      const em = orm.em.fork();
      const delivery = await em.findOne(WebhookDelivery, { id: deliveryId }, { populate: ['endpoint'] });
      if (delivery?.status !== 'pending') return 'done';
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
        return 'done';
      }
      const secret = openWebhookSecret(serviceSecret, endpoint.secret);
      if (!secret) {
        // Sealed under another service secret: no try can sign it.
        giveUp(
          'the endpoint’s secret cannot be opened (the service secret changed); give it a new one with POST …/webhooks/{webhookId}/secret',
        );
        await em.flush();
        return 'done';
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
      return delivery.status === 'pending' ? 'retry' : 'done';
    },

    async markWebhookDeliveryFailed(deliveryId: string, reason: string) {
      await orm.em
        .fork()
        .nativeUpdate(
          WebhookDelivery,
          { id: deliveryId, status: 'pending' },
          { status: 'failed', failure: failureText(reason), nextAttemptAt: null },
        );
    },
  } satisfies WebhookActivities;
}

/** `failure` holds at most 500 characters (its column). */
function failureText(text: string) {
  return text.length > 500 ? `${text.slice(0, 499)}…` : text;
}
