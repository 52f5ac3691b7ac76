import { proxyActivities } from '@temporalio/workflow';
import type { DeliverMailWorkflow, MailActivities } from './contracts/mail.ts';

// An SMTP server that is down for a while must not lose a verification mail: retry for hours.
const MAIL_SEND_TIMEOUT = '30 seconds';
const MAIL_RETRY = { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes', maximumAttempts: 30 };
const MARK_FAILED_TIMEOUT = '10 seconds';

const { deliverMail } = proxyActivities<MailActivities>({
  startToCloseTimeout: MAIL_SEND_TIMEOUT,
  retry: MAIL_RETRY,
});

const { markMailFailed } = proxyActivities<MailActivities>({
  startToCloseTimeout: MARK_FAILED_TIMEOUT,
});

/**
 * Delivers one row of `mails`. The workflow id is `mail-<id>`, so a mail is sent once. When the
 * tries run out (or the server refuses for good) the row is marked `failed` and its body cleared,
 * then the workflow fails with the cause.
 */
export const deliverMailWorkflow: DeliverMailWorkflow = async (mailId) => {
  try {
    await deliverMail(mailId);
  } catch (error) {
    await markMailFailed(mailId);
    throw error;
  }
};
