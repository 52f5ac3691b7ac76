import { proxyActivities } from '@temporalio/workflow';
import type { DeliverMailWorkflow, MailActivities } from './contracts/mail.ts';
import { retryPolicies } from './retryPolicies.ts';

const MAIL_SEND_TIMEOUT = '30 seconds';
const MARK_FAILED_TIMEOUT = '10 seconds';

const { deliverMail } = proxyActivities<MailActivities>({
  startToCloseTimeout: MAIL_SEND_TIMEOUT,
  retry: retryPolicies.mail,
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
