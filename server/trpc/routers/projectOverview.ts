import { type FilterQuery, QueryOrder } from '@mikro-orm/core';
import { z } from 'zod';
import { Pipeline, PipelineFunction, PipelineRun } from '../../../db/entities/index.ts';
import { evaluationStatuses, runStatuses } from '../../../db/entities/PipelineRun.ts';
import { usageUnits } from '../../../db/entities/UsageRecord.ts';
import { minorString, parseQuantity, quantityString } from '../../billing/money.ts';
import { BadRequest, PermissionDenied } from '../../errors.ts';
import { functionActions, pipelineActions, projectActions } from '../../permissions/permissions.ts';
import { findInProject, readableIds } from '../../projects/projectRows.ts';
import { iso } from '../../wireShapes.ts';
import { projectProcedure, router } from '../base.ts';

/**
 * The console's overview of a project (issue 37): its runs across pipelines and functions, and
 * what it used. Console-only procedures: no REST route (no `openapi` meta), so the spec's paths
 * are unchanged; the console reaches them through tRPC like any other procedure.
 */

const runSorts = ['created', 'started', 'finished', 'status'] as const;

const runsInput = z.strictObject({
  project: z.string().max(100),
  /** Only runs in one of these states (any state when absent or empty). */
  status: z.array(z.enum(runStatuses)).max(runStatuses.length).optional(),
  /** Only runs of this pipeline, or only executions of this function (not both). */
  pipelineId: z.uuid('a pipeline id is a UUID').optional(),
  functionId: z.uuid('a function id is a UUID').optional(),
  /** Runs created at or after `from`, and before `to` (ISO 8601 with a zone). */
  from: z.iso.datetime({ offset: true, message: 'a time in ISO 8601 with its zone, such as 2026-12-07T10:00:00Z' }).optional(),
  to: z.iso.datetime({ offset: true, message: 'a time in ISO 8601 with its zone, such as 2026-12-07T10:00:00Z' }).optional(),
  sort: z.enum(runSorts).default('created'),
  order: z.enum(['asc', 'desc']).default('desc'),
  limit: z.number().int().min(1).max(100).default(20),
  offset: z.number().int().min(0).max(100_000).default(0),
});

const runRow = z.object({
  id: z.string(),
  kind: z.enum(['pipeline', 'function']),
  /** The pipeline run's pipeline; null for a function's execution. */
  pipeline: z.object({ id: z.string(), name: z.string() }).nullable(),
  /** The executed function; null for a pipeline run. */
  function: z.object({ id: z.string(), name: z.string(), slug: z.string() }).nullable(),
  status: z.enum(runStatuses),
  evaluation: z.enum(evaluationStatuses),
  /** Where a failed run failed: its node and code (the message is on the run's own page). */
  error: z.object({ node: z.string().nullable(), code: z.string() }).nullable(),
  created: z.string(),
  started: z.string().nullable(),
  finished: z.string().nullable(),
});

const usageInput = z.strictObject({
  project: z.string().max(100),
  /** The last `days` days, today included (UTC). */
  days: z.number().int().min(1, 'at least 1 day').max(366, 'at most 366 days').default(30),
});

const quantities = z.object({
  cpu: z.string().describe('CPU seconds'),
  network: z.string().describe('network bytes'),
  tokens: z.string().describe('model tokens'),
  browserSeconds: z.string().describe('seconds browsers ran, counted on the day each started'),
});

const usageAnswer = z.object({
  billingEnabled: z.boolean(),
  currency: z.string(),
  since: z.string(),
  totals: quantities.extend({ browsers: z.number(), billed: z.string().describe('minor units taken from the balance') }),
  days: z.array(quantities.extend({ day: z.string().describe('YYYY-MM-DD (UTC)'), billed: z.string() })),
});

type RunRow = z.infer<typeof runRow>;

export const projectOverviewRouter = router({
  /**
   * The project's runs of pipeline versions and executions of functions, newest first unless
   * told, one page of them with the count of all that match. Each row only where the caller may
   * read its pipeline (`pipelines.read`) or function (`functions.read`), as the run's own page
   * asks; a caller who may read neither is refused.
   */
  runs: projectProcedure
    .input(runsInput)
    .output(z.object({ runs: z.array(runRow), total: z.number() }))
    .query(async ({ ctx, input }) => {
      if (input.from && input.to && Date.parse(input.from) >= Date.parse(input.to)) {
        throw new BadRequest('invalid_input', 'Invalid input: to: must be later than from', {
          issues: [{ path: ['to'], message: 'must be later than from' }],
        });
      }
      if (input.pipelineId && input.functionId) {
        throw new BadRequest('invalid_input', 'Invalid input: functionId: name a pipeline or a function, not both', {
          issues: [{ path: ['functionId'], message: 'name a pipeline or a function, not both' }],
        });
      }
      const [pipelines, functions] = await Promise.all([
        readableIds(ctx, Pipeline, pipelineActions.read),
        readableIds(ctx, PipelineFunction, functionActions.read),
      ]);
      if (pipelines !== 'all' && functions !== 'all' && !pipelines.length && !functions.length) {
        throw new PermissionDenied(`Missing permission ${ctx.project.slug}.${pipelineActions.read} or ${functionActions.read}`);
      }
      // A pipeline or function named: 404 unless the caller may read it, as its own pages answer.
      if (input.pipelineId) await findInProject(ctx, Pipeline, input.pipelineId, pipelineActions.read, 'Pipeline');
      if (input.functionId) await findInProject(ctx, PipelineFunction, input.functionId, functionActions.read, 'Function');

      const pipelineRuns = {
        version: { $ne: null },
        pipeline: input.pipelineId ? input.pipelineId.toLowerCase() : pipelines === 'all' ? { $ne: null } : { $in: pipelines },
      };
      const functionRuns = {
        functionVersion: input.functionId
          ? { function: input.functionId.toLowerCase() }
          : functions === 'all'
            ? { $ne: null }
            : { function: { $in: functions } },
      };
      const kinds = input.pipelineId ? [pipelineRuns] : input.functionId ? [functionRuns] : [pipelineRuns, functionRuns];
      const created: Record<string, Date> = {};
      if (input.from) created.$gte = new Date(input.from);
      if (input.to) created.$lt = new Date(input.to);
      const where = {
        project: ctx.project.id,
        // A generation's dry run belongs to its job's page, not to the project's runs.
        generation: null,
        $or: kinds,
        ...(input.status?.length ? { status: { $in: input.status } } : {}),
        ...(input.from || input.to ? { created } : {}),
      } as unknown as FilterQuery<PipelineRun>;
      const direction =
        input.order === 'asc'
          ? input.sort === 'started' || input.sort === 'finished'
            ? QueryOrder.ASC_NULLS_LAST
            : QueryOrder.ASC
          : input.sort === 'started' || input.sort === 'finished'
            ? QueryOrder.DESC_NULLS_LAST
            : QueryOrder.DESC;
      const column = { created: 'created', started: 'startedAt', finished: 'finishedAt', status: 'status' }[input.sort];
      const [rows, total] = await ctx.em.findAndCount(PipelineRun, where, {
        // The row's own columns, not its arguments and outputs (JSON of any size).
        fields: [
          'id',
          'status',
          'evaluation',
          'error',
          'created',
          'startedAt',
          'finishedAt',
          'pipeline.name',
          'functionVersion.function.name',
          'functionVersion.function.slug',
        ],
        orderBy: [{ [column]: direction }, { id: input.order === 'asc' ? QueryOrder.ASC : QueryOrder.DESC }] as never,
        limit: input.limit,
        offset: input.offset,
      });
      const runs: RunRow[] = rows.map((run) => {
        const fn = run.functionVersion?.function;
        return {
          id: run.id,
          kind: fn ? 'function' : 'pipeline',
          pipeline: !fn && run.pipeline ? { id: run.pipeline.id, name: run.pipeline.name } : null,
          function: fn ? { id: fn.id, name: fn.name, slug: fn.slug } : null,
          status: run.status,
          evaluation: run.evaluation,
          error: run.error ? { node: run.error.node, code: run.error.code } : null,
          created: iso(run.created),
          started: run.startedAt ? iso(run.startedAt) : null,
          finished: run.finishedAt ? iso(run.finishedAt) : null,
        };
      });
      return { runs, total };
    }),

  /**
   * What the project used over the last `days`: CPU, network and model tokens as metered (usage
   * records are written whether or not billing is on), and the time its browsers ran, by day.
   * For who may change the project (its owner, or a key that lets `projects.write` through).
   */
  usage: projectProcedure
    .input(usageInput)
    .output(usageAnswer)
    .query(async ({ ctx, input }) => {
      ctx.authorize(projectActions.write);
      const now = new Date();
      const since = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
      since.setUTCDate(since.getUTCDate() - (input.days - 1));
      const connection = ctx.em.getConnection();
      const [metered, browsers, currencies] = await Promise.all([
        connection.execute<{ day: string; unit: string; amount: string; billed: string }[]>(
          `select to_char(created at time zone 'UTC', 'YYYY-MM-DD') as day, unit, sum(amount)::text as amount, sum(billed)::text as billed
             from usage_records where project_id = ? and created >= ? group by 1, 2 order by 1`,
          [ctx.project.id, since],
        ),
        connection.execute<{ day: string; seconds: string; browsers: string }[]>(
          `select to_char(started_at at time zone 'UTC', 'YYYY-MM-DD') as day,
                  round(sum(extract(epoch from coalesce(stopped_at, now()) - started_at)))::bigint::text as seconds,
                  count(*)::text as browsers
             from session_resources where project_id = ? and started_at >= ? group by 1 order by 1`,
          [ctx.project.id, since],
        ),
        connection.execute<{ currency: string | null }[]>(
          'select currency from usage_records where project_id = ? and currency is not null order by created desc limit 1',
          [ctx.project.id],
        ),
      ]);
      type Day = { cpu: bigint; network: bigint; tokens: bigint; billed: bigint; browserSeconds: bigint };
      const zero = (): Day => ({ cpu: 0n, network: 0n, tokens: 0n, billed: 0n, browserSeconds: 0n });
      const days = new Map<string, Day>();
      const totals = zero();
      for (const row of metered) {
        const day = days.get(row.day) ?? zero();
        const amount = parseQuantity(row.amount) ?? 0n;
        if ((usageUnits as readonly string[]).includes(row.unit)) {
          day[row.unit as (typeof usageUnits)[number]] += amount;
          totals[row.unit as (typeof usageUnits)[number]] += amount;
        }
        day.billed += BigInt(row.billed);
        totals.billed += BigInt(row.billed);
        days.set(row.day, day);
      }
      let browserCount = 0;
      for (const row of browsers) {
        const day = days.get(row.day) ?? zero();
        day.browserSeconds += BigInt(row.seconds);
        totals.browserSeconds += BigInt(row.seconds);
        browserCount += Number(row.browsers);
        days.set(row.day, day);
      }
      const shown = (entry: Day) => ({
        cpu: quantityString(entry.cpu),
        network: quantityString(entry.network),
        tokens: quantityString(entry.tokens),
        browserSeconds: entry.browserSeconds.toString(),
        billed: minorString(entry.billed),
      });
      return {
        billingEnabled: ctx.deps.config.billing.enabled,
        currency: currencies[0]?.currency ?? ctx.deps.config.billing.currency,
        since: iso(since),
        totals: { ...shown(totals), browsers: browserCount },
        days: [...days].sort(([a], [b]) => a.localeCompare(b)).map(([day, entry]) => ({ day, ...shown(entry) })),
      };
    }),
});
