import { randomBytes } from 'node:crypto';
import { openString, sealString } from '../auth/secrets.ts';

/**
 * An endpoint's signing secret, as the Standard Webhooks specification writes it: `whsec_` and 24
 * random bytes in base64. Stored sealed under the service secret; answered once, at creation.
 */

const PURPOSE = 'webhook-secret';

export function newWebhookSecret() {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export function sealWebhookSecret(serviceSecret: string, secret: string) {
  return sealString(serviceSecret, PURPOSE, secret);
}

/** The secret, or null when it was sealed under another service secret. */
export function openWebhookSecret(serviceSecret: string, sealed: string) {
  return openString(serviceSecret, PURPOSE, sealed);
}
