import type { MikroORM } from '@mikro-orm/postgresql';
import { ApplicationFailure } from '@temporalio/activity';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import { Mail } from '../db/entities/index.ts';
import type { Config } from '../server/config.ts';
import type { MailActivities } from '../workflows/contracts/mail.ts';

export function createMailActivities({ config, orm, log }: { config: Config; orm: MikroORM; log: Logger }) {
  const transport = config.mail.smtpUrl ? nodemailer.createTransport(config.mail.smtpUrl) : undefined;

  return {
    /** Idempotent: a mail already sent (or kept) is not sent again when Temporal retries. */
    async deliverMail(mailId: string) {
      const em = orm.em.fork();
      const mail = await em.findOne(Mail, { id: mailId }, { populate: ['text'] });
      if (!mail) throw ApplicationFailure.nonRetryable(`mail ${mailId} does not exist`, 'MailMissing');
      if (mail.status === 'sent' || mail.status === 'outbox' || mail.status === 'failed') return;
      mail.attempts += 1;
      if (!transport) {
        // The config refuses production without SMTP_URL; this is the last line behind it.
        if (config.env === 'production') throw ApplicationFailure.nonRetryable('no SMTP_URL in production', 'MailNotConfigured');
        // Development outbox: no SMTP_URL, so the mail is kept in the table. Its body may hold a
        // one-time token: printed in development only, where the developer needs the link.
        const body = config.env === 'development' ? `:\n${mail.text ?? ''}` : ' (body kept in the mails table)';
        log.info({ mailId, to: mail.to, subject: mail.subject }, `development outbox${body}`);
        mail.status = 'outbox';
        await em.flush();
        return;
      }
      try {
        await transport.sendMail({ from: config.mail.from, to: mail.to, subject: mail.subject, text: mail.text ?? '' });
      } catch (error) {
        await em.flush();
        const responseCode = (error as { responseCode?: number }).responseCode;
        // 5xx is the server's final answer (no such mailbox, refused): retrying cannot help.
        if (responseCode !== undefined && responseCode >= 500 && responseCode < 600) {
          log.warn({ mailId, attempt: mail.attempts, err: error }, 'mail refused by the SMTP server');
          throw ApplicationFailure.nonRetryable(`the SMTP server refused the mail (${responseCode})`, 'MailRefused', { responseCode });
        }
        log.warn({ mailId, attempt: mail.attempts, err: error }, 'mail delivery failed; will retry');
        throw error;
      }
      mail.status = 'sent';
      mail.sentAt = new Date();
      mail.text = null; // it may hold a one-time token; it has no use once delivered
      await em.flush();
    },

    /** After the last try: the mail will not go out, and its body (a one-time token, maybe) goes. */
    async markMailFailed(mailId: string) {
      const em = orm.em.fork();
      await em.nativeUpdate(Mail, { id: mailId, status: 'queued' }, { status: 'failed', text: null });
    },
  } satisfies MailActivities;
}
