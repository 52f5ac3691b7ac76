/** The contract of `deliverMailWorkflow` (workflows/mail.ts): started with a `mails` row's id. */

export type DeliverMailWorkflow = (mailId: string) => Promise<void>;
/** Its workflow type: server/mail/sendMail.ts starts it by this name. */
export const deliverMailWorkflowType = 'deliverMailWorkflow';

/** Its activities on the control queue (activities/mail.ts). */
export type MailActivities = {
  /** Idempotent: a mail already sent (or kept) is not sent again. */
  deliverMail(mailId: string): Promise<void>;
  markMailFailed(mailId: string): Promise<void>;
};
