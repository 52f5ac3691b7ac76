import { proxyActivities, sleep } from '@temporalio/workflow';
import type { WebhookActivities, WebhookDeliveryWorkflow } from './contracts/webhooks.ts';

// A try takes at most the send timeout (WEBHOOK_TIMEOUT_SECONDS, at most 60 s) and two writes;
// the activity is retried only when the service itself fails (the database is down), never for
// the endpoint's answer, which the workflow's own schedule handles.
const { attemptWebhookDelivery } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 20 },
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
    const outcome = await attemptWebhookDelivery(deliveryId, nextDelaySeconds);
    if (outcome === 'done' || nextDelaySeconds === null) return;
    await sleep(nextDelaySeconds * 1000);
  }
};
