import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  AnalysisJob,
  BillingAccount,
  GenerationJob,
  Project,
  SessionResource,
  UsageRecord,
  type UsageUnit,
} from '../../db/entities/index.ts';
import type { MeterAction } from '../../workflows/contracts/billing.ts';
import type { Config } from '../config.ts';
import { currencyOf } from '../decimals.ts';
import { fundsEvent } from '../webhooks/eventData.ts';
import { recordWebhookEvent } from '../webhooks/events.ts';
import { debitUsage, lockAccount, ownerOf } from './ledger.ts';
import { quantityString, usageCostMicros } from './money.ts';

/**
 * Metering: every report of usage (a browser's CPU and network from its workflow, a model call's
 * tokens, a coordinator's POST) becomes one usage record, priced and drawn from the plan's pool
 * and then the balance (server/billing/ledger.ts) in one transaction. The answer says whether the
 * workload may go on.
 */

export type UsageReport = {
  /** The browser resource, analysis or generation job the usage belongs to. */
  resourceId: string;
  unit: UsageUnit;
  /** Millionths of the unit (server/billing/money.ts `parseQuantity`). */
  quantityMicro: bigint;
  /** A reporter's id for the report: sent again, it is recorded (and debited) once. */
  reportId?: string;
};

export type MeterAnswer = {
  action: MeterAction;
  /** The owner of the project the usage belongs to: whose funds it drew on. */
  userId: string;
  /** When that account's funds ran out, if they have (the shutdown's key). */
  exhaustedAt: Date | null;
  recordId: string;
  /** Webhook deliveries this report recorded (`funds.low`, `funds.exhausted`), to start now it has committed. */
  deliveries: string[];
};

/** The project a metered resource belongs to: a browser resource, or an analysis or generation job. */
export async function projectOfResource(em: EntityManager, resourceId: string) {
  for (const entity of [SessionResource, AnalysisJob, GenerationJob] as const) {
    const row = await em.findOne(entity as typeof SessionResource, { id: resourceId }, { fields: ['project'] });
    if (row) return em.findOneOrFail(Project, { id: row.project.id });
  }
  return null;
}

export async function meter(em: EntityManager, billing: Config['billing'], project: Project, report: UsageReport): Promise<MeterAnswer> {
  const userId = ownerOf(project);
  const currency = currencyOf(billing.currency);
  if (!currency) throw new Error(`unknown billing currency ${billing.currency}`);
  const price = billing.pricing[report.unit];
  try {
    return await em.transactional(async (tx) => {
      if (report.reportId) {
        const seen = await tx.findOne(UsageRecord, { reportId: report.reportId });
        if (seen) return answerFor(tx, billing, userId, seen.id);
      }
      const account = await lockAccount(tx, billing, userId);
      const availableBefore = account.available;
      const exhaustedBefore = account.exhaustedAt;
      const record = tx.create(UsageRecord, {
        project: project.id,
        account,
        resourceId: report.resourceId,
        unit: report.unit,
        amount: quantityString(report.quantityMicro),
        reportId: report.reportId ?? null,
        currency: account.currency,
      });
      const debit = await debitUsage(
        tx,
        billing,
        account,
        { unit: report.unit, quantityMicro: report.quantityMicro, cost: (quantity) => usageCostMicros(quantity, price, currency) },
        record,
      );
      record.fromPool = quantityString(debit.fromPool);
      record.discountMicros = debit.discountMicros;
      record.costMicros = debit.costMicros;
      record.billed = debit.billed;
      record.pending = debit.pending;
      await tx.flush();
      const deliveries = await fundsEvents(tx, billing, userId, account, availableBefore, exhaustedBefore);
      return {
        action: debit.exhausted ? 'shutdown' : 'continue',
        userId,
        exhaustedAt: account.exhaustedAt ?? null,
        recordId: record.id,
        deliveries,
      };
    });
  } catch (error) {
    // The same report id, recorded meanwhile by a concurrent delivery: answer as that one did.
    if (report.reportId && error instanceof UniqueConstraintViolationException) {
      const seen = await em.fork().findOneOrFail(UsageRecord, { reportId: report.reportId });
      return answerFor(em.fork(), billing, userId, seen.id);
    }
    throw error;
  }
}

async function answerFor(em: EntityManager, billing: Config['billing'], userId: string, recordId: string): Promise<MeterAnswer> {
  const account = await em.findOne(BillingAccount, { user: userId });
  const exhaustedAt = billing.enabled ? (account?.exhaustedAt ?? null) : null;
  return { action: exhaustedAt ? 'shutdown' : 'continue', userId, exhaustedAt, recordId, deliveries: [] };
}

/**
 * The funds events a debit caused, recorded in its transaction for every project of the owner:
 * `funds.low` when the balance went from at or above the threshold to below it, `funds.exhausted`
 * when this report ended the funds.
 */
async function fundsEvents(
  tx: EntityManager,
  billing: Config['billing'],
  userId: string,
  account: BillingAccount,
  availableBefore: bigint,
  exhaustedBefore: Date | null | undefined,
) {
  if (!billing.enabled) return [];
  const events: ('funds.low' | 'funds.exhausted')[] = [];
  const threshold = billing.fundsLowThreshold;
  if (availableBefore >= threshold && account.available < threshold) events.push('funds.low');
  if (!exhaustedBefore && account.exhaustedAt) events.push('funds.exhausted');
  if (!events.length) return [];
  const projectIds = (await tx.find(Project, { owner: userId }, { fields: ['id'] })).map((project) => project.id);
  const at = account.exhaustedAt ?? new Date();
  const ids: string[] = [];
  for (const event of events)
    ids.push(...(await recordWebhookEvent(tx, fundsEvent(event, projectIds, account, event === 'funds.exhausted' ? at : new Date()))));
  return ids;
}
