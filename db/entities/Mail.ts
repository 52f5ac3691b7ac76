import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id } from './common.ts';

/**
 * Outgoing mail. The `deliverMail` workflow sends it with retries. Once sent over SMTP the
 * body is cleared, since it may carry a one-time token; without SMTP it stays as the
 * development outbox.
 */
export const Mail = defineEntity({
  name: 'Mail',
  tableName: 'mails',
  properties: {
    id: id(),
    to: p.string().length(320),
    subject: p.string().length(300),
    text: p.text().nullable().hidden(),
    status: p.enum(['queued', 'sent', 'outbox', 'failed'] as const).default('queued'),
    attempts: p.integer().default(0),
    sentAt: p.datetime().nullable(),
    created: created(),
  },
});

export type Mail = InferEntity<typeof Mail>;
