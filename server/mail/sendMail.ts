import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client as TemporalClient } from '@temporalio/client';
import { Mail } from '../../db/entities/index.ts';
import { type DeliverMailWorkflow, deliverMailWorkflowType } from '../../workflows/contracts/mail.ts';
import { workflowIds } from '../../workflows/contracts/workflowIds.ts';
import { ServiceUnavailable } from '../errors.ts';

export type OutgoingMail = { to: string; subject: string; text: string };

/**
 * Stores the mail and hands it to the `deliverMailWorkflow`, which sends it with retries.
 * Resolves once Temporal has accepted the workflow, so the mail is durable from then on.
 */
export async function sendMail(em: EntityManager, temporal: TemporalClient, taskQueue: string, outgoing: OutgoingMail) {
  const mail = em.create(Mail, { to: outgoing.to, subject: outgoing.subject, text: outgoing.text });
  await em.flush();
  try {
    await temporal.workflow.start<DeliverMailWorkflow>(deliverMailWorkflowType, {
      taskQueue,
      workflowId: workflowIds.mail(mail.id),
      args: [mail.id],
    });
  } catch (error) {
    throw new ServiceUnavailable('The mail could not be queued; try again shortly', error);
  }
  return mail.id;
}
