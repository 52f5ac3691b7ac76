import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { SessionResource } from '../../../db/entities/index.ts';
import { appendLogs, logStreams, type NewLogEntry } from '../../logs/logWriter.ts';

/**
 * The one writer of a session resource's status. A row is created `starting` (a cold launch) or
 * `running` (a warm browser the api claimed: the claim and the row are one transaction); from
 * then on every change goes through here and writes the row and its lifecycle log line together:
 * the host records `running` when it has launched (one round trip less before the api answers),
 * the api records `stopping` as soon as a stop is asked of the workflow, the workflow records
 * `stopping` and its end, and whatever settles a row its workflow no longer will (the sweeper, a
 * stop that finds the workflow closed, a start that never began) does so conditionally, so an
 * outcome written meanwhile stands.
 */

/** Resources in these states hold (or are about to hold) a browser: they take their place on its host. */
export const activeResourceStatuses = ['starting', 'running', 'stopping'] as const;

/**
 * Resources their project still uses: a `stopping` one was let go by a stop (its workflow finishes
 * the teardown), so it no longer counts against the project's limit or makes its session `running`,
 * though it keeps its place on its host until it has stopped.
 */
export const inUseResourceStatuses = ['starting', 'running'] as const;

type Settled = 'stopped' | 'failed';

const maxSummaryLength = 200;

/**
 * A launch failure as callers may see it. Playwright's text goes on with the browser's output,
 * a call log, the command line with every flag and the host's paths: only the first line is
 * kept, without Playwright's method prefix (such as `browserType.connectOverCDP: `), absolute
 * paths or flags.
 */
export function summarizeLaunchFailure(reason: string) {
  const firstLine = reason.split(/\r?\n|\s+Call log:/)[0] ?? '';
  const summary = firstLine
    // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal colour codes in Playwright's text
    .replace(/\u001b\[[0-9;]*m/g, '')
    .replace(/(^|: )(?:browserType|browserContext|browser|page|frame|cdpSession)\.\w+: /, '$1')
    .replace(/(^|[\s'"(=,])\/[^\s'"),;]*/g, '$1…')
    .replace(/(^|\s)--[a-z][\w-]*(?:=\S*)?/gi, '$1')
    .replace(/\s+/g, ' ')
    .trim();
  if (!summary) return 'the browser failed to launch';
  return summary.length > maxSummaryLength ? `${summary.slice(0, maxSummaryLength - 1)}…` : summary;
}

function lifecycle(em: EntityManager, resource: SessionResource, entry: Omit<NewLogEntry, 'context' | 'area'>) {
  return appendLogs(em, resource.project.id, logStreams.resource(resource.id), [
    { context: 'lifecycle', area: 'lifecycle', ...entry, object: { ...entry.object, host: resource.hostId } },
  ]);
}

/**
 * The host launched the browser: running, at this endpoint. Only a row still `starting` changes: a
 * stop requested during the launch (`stopping`) or an outcome written meanwhile stands, and the
 * workflow stops the browser next.
 */
export async function recordLaunched(
  em: EntityManager,
  resource: SessionResource,
  launched: { cdpEndpoint: string; pid: number | null; warm: boolean },
) {
  const now = new Date();
  // One transaction, as every status change with its log line: the row never says more than the log.
  await em.transactional(async (tx) => {
    const changed = await tx.nativeUpdate(
      SessionResource,
      { id: resource.id, status: 'starting' },
      {
        status: 'running',
        cdpEndpoint: launched.cdpEndpoint,
        pid: launched.pid,
        warm: launched.warm,
        startedAt: resource.startedAt ?? now,
        lastActivity: resource.lastActivity ?? now,
        updated: now,
      },
    );
    if (!changed) return;
    await lifecycle(tx, resource, {
      severity: 'info',
      message: `browser running on host ${resource.hostId}`,
      object: { status: 'running' },
    });
  });
}

/**
 * A stop was asked of the resource's workflow (it holds the signal): the row says `stopping` before
 * the caller hears back, so nothing takes the browser for running any more (a run looking for the
 * session's browser, the project's limit, the CDP proxy). Only from `starting` or `running`: the
 * workflow may have moved on already, and its own steps (`recordWorkflowStep`) stand. The lifecycle
 * line is the workflow's, written when it starts the teardown. Answers whether the row changed.
 */
export async function recordStopRequested(em: EntityManager, resource: SessionResource, reason: string) {
  const changed = await em.nativeUpdate(SessionResource, { id: resource.id, status: { $in: [...inUseResourceStatuses] } } as never, {
    status: 'stopping',
    stopReason: summarizeLaunchFailure(reason),
    updated: new Date(),
  });
  return changed > 0;
}

/** The host took over the warm browser the api claimed (its row says running since the claim). */
export async function recordAdopted(em: EntityManager, resource: SessionResource) {
  await lifecycle(em, resource, {
    severity: 'info',
    message: `browser running on host ${resource.hostId} (from the warm pool)`,
    object: { status: 'running' },
  });
}

/**
 * The workflow's own steps: `stopping`, then its end, each with the reason. Reasons come from the host
 * (Playwright's text with its call log, flags and paths): the row and the resource's log, which
 * callers read, get the summary; the server log the rest.
 */
export async function recordWorkflowStep(
  em: EntityManager,
  resourceId: string,
  change: { status: 'stopping' | Settled; reason?: string },
  log: Logger,
) {
  const reason = change.reason === undefined ? undefined : summarizeLaunchFailure(change.reason);
  if (reason !== undefined && reason !== change.reason && change.status !== 'stopping') {
    log.warn({ resourceId, status: change.status, reason: change.reason }, 'browser resource settled');
  }
  // One transaction: whoever reads the row settled also finds its log line.
  await em.transactional(async (tx) => {
    const resource = await tx.findOne(SessionResource, { id: resourceId });
    if (!resource) return;
    resource.status = change.status;
    // While stopping, the reason says why (the api may have written it first, from a stop request).
    resource.stopReason = reason ?? resource.stopReason ?? null;
    if (change.status !== 'stopping') {
      resource.stoppedAt ??= new Date();
      resource.cdpEndpoint = null;
    }
    await tx.flush();
    await lifecycle(tx, resource, {
      severity: change.status === 'failed' ? 'error' : 'info',
      message: change.status === 'stopping' ? 'browser stopping' : `browser ${change.status}: ${reason ?? 'no reason given'}`,
      object: { status: change.status },
    });
  });
}

/**
 * Settles a row its workflow will not (any more): only while its status is one of `from`, so a
 * workflow that settled it meanwhile keeps its own outcome. `severity` null writes no log line
 * (the row of a start that never reached a host). Answers whether the row changed.
 */
export async function settleUnmanaged(
  em: EntityManager,
  resource: SessionResource,
  outcome: { status: Settled; reason: string; from?: readonly string[]; severity: 'error' | 'warn' | null },
) {
  // One transaction: whoever reads the row settled also finds its log line.
  return em.transactional(async (tx) => {
    const changed = await tx.nativeUpdate(
      SessionResource,
      { id: resource.id, status: { $in: [...(outcome.from ?? activeResourceStatuses)] } } as never,
      { status: outcome.status, stopReason: outcome.reason, stoppedAt: new Date(), cdpEndpoint: null },
    );
    if (changed && outcome.severity) {
      await lifecycle(tx, resource, {
        severity: outcome.severity,
        message: `browser ${outcome.status}: ${outcome.reason}`,
        object: { status: outcome.status },
      });
    }
    return changed > 0;
  });
}
