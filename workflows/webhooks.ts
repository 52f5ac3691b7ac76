import { proxyActivities, sleep } from '@temporalio/workflow';
import type { WebhookActivities, WebhookAttemptOutcome, WebhookDeliveryWorkflow } from './contracts/webhooks.ts';
import { retryPolicies } from './retryPolicies.ts';

// A try takes at most the send timeout (WEBHOOK_TIMEOUT_SECONDS, at most 60 s) and two writes;
// the activity is retried only when the service itself fails (the database is down), never for
// the endpoint's answer, which the workflow's own schedule handles.
const { attemptWebhookDelivery } = proxyActivities<WebhookActivities>({ startToCloseTimeout: '2 minutes', retry: retryPolicies.service });
const { markWebhookDeliveryFailed } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '30 seconds',
  retry: retryPolicies.service,
});

/**
 * Delivers one webhook (docs/webhooks.md): a try at once, then after each failure a wait that
 * doubles from `initialSeconds` up to `maxIntervalSeconds`, while the tries fit in
 * `giveUpAfterSeconds` (25 hours by default). The workflow id is `webhook-<deliveryId>`, so a
 * delivery is sent by one workflow; a resend is a delivery of its own.
 */
export const webhookDeliveryWorkflow: WebhookDeliveryWorkflow = async ({ deliveryId, retry }) => {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    const delay = Math.min(retry.initialSeconds * 2 ** attempt, retry.maxIntervalSeconds);
    const elapsedSeconds = (Date.now() - started) / 1000;
    const nextDelaySeconds = elapsedSeconds + delay <= retry.giveUpAfterSeconds ? delay : null;
    let outcome: WebhookAttemptOutcome;
    try {
      outcome = await attemptWebhookDelivery(deliveryId, nextDelaySeconds);
    } catch (error) {
      // The service could not try (its database away for a quarter of an hour): the delivery says
      // so instead of staying pending. Resending it starts over.
      await markWebhookDeliveryFailed(
        deliveryId,
        `the service could not try it: ${error instanceof Error ? error.message : String(error)}`,
      );
      throw error;
    }
    if (outcome === 'done' || nextDelaySeconds === null) return;
    await sleep(nextDelaySeconds * 1000);
  }
};
