import type { MikroORM } from '@mikro-orm/postgresql';
import { ApplicationFailure } from '@temporalio/activity';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import { Mail } from '../db/entities/index.ts';
import type { Config } from '../server/config.ts';

export function createMailActivities({ config, orm, log }: { config: Config; orm: MikroORM; log: Logger }) {
  const transport = config.mail.smtpUrl ? nodemailer.createTransport(config.mail.smtpUrl) : undefined;

  return {
    /** Idempotent: a mail already sent (or kept) is not sent again when Temporal retries. */
    async deliverMail(mailId: string) {
      const em = orm.em.fork();
      const mail = await em.findOne(Mail, { id: mailId }, { populate: ['text'] });
      if (!mail) throw ApplicationFailure.nonRetryable(`mail ${mailId} does not exist`, 'MailMissing');
      if (mail.status === 'sent' || mail.status === 'outbox') return;
      mail.attempts += 1;
      if (!transport) {
        // Development outbox: no SMTP_URL, so the mail is kept in the table and printed.
        log.info({ mailId, to: mail.to, subject: mail.subject }, `development outbox:\n${mail.text ?? ''}`);
        mail.status = 'outbox';
        await em.flush();
        return;
      }
      try {
        await transport.sendMail({ from: config.mail.from, to: mail.to, subject: mail.subject, text: mail.text ?? '' });
      } catch (error) {
        await em.flush();
        log.warn({ mailId, attempt: mail.attempts, err: (error as Error).message }, 'mail delivery failed; will retry');
        throw error;
      }
      mail.status = 'sent';
      mail.sentAt = new Date();
      mail.text = null; // it may hold a one-time token; it has no use once delivered
      await em.flush();
    },
  };
}
