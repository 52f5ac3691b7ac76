/** The contract of `webhookDeliveryWorkflow` (workflows/webhooks.ts): one delivery, with its tries. */

/** How long to wait between tries: doubling from `initialSeconds` up to `maxIntervalSeconds`, for `giveUpAfterSeconds` in all. */
export type WebhookRetry = { initialSeconds: number; maxIntervalSeconds: number; giveUpAfterSeconds: number };

export type WebhookDeliveryInput = { deliveryId: string; retry: WebhookRetry };
export type WebhookDeliveryWorkflow = (input: WebhookDeliveryInput) => Promise<void>;
/** Its workflow type: server/webhooks/events.ts starts it by this name. */
export const webhookDeliveryWorkflowType = 'webhookDeliveryWorkflow';

/** `done`: delivered, or given up for good; `retry`: try again after the delay the attempt recorded. */
export type WebhookAttemptOutcome = 'done' | 'retry';

/** Its activity on the control queue (activities/webhooks.ts). */
export type WebhookActivities = {
  /**
   * One try: signs and sends the delivery, and records the attempt with its answer. With
   * `nextDelaySeconds` null this is the last try: a failure marks the delivery failed. Idempotent
   * for a delivery no longer pending.
   */
  attemptWebhookDelivery(deliveryId: string, nextDelaySeconds: number | null): Promise<WebhookAttemptOutcome>;
  /** The tries could not go on (the service's own failure): a delivery still pending is failed with `reason`. */
  markWebhookDeliveryFailed(deliveryId: string, reason: string): Promise<void>;
};
