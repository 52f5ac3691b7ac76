import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { SessionResource } from '../../db/entities/index.ts';
import { appendLogs, logStreams, type NewLogEntry } from '../logs/logWriter.ts';

/**
 * The one writer of a session resource's status. A row is created `starting` (a cold launch) or
 * `running` (a warm browser the api claimed: the claim and the row are one transaction); from
 * then on every change goes through here and writes the row and its lifecycle log line together:
 * the host records `running` when it has launched (one round trip less before the api answers),
 * the workflow records `stopping` and its end, and whatever settles a row its workflow no longer
 * will (the sweeper, a stop that finds the workflow closed, a start that never began) does so
 * conditionally, so an outcome written meanwhile stands.
 */

/** Resources in these states hold (or are about to hold) a browser. */
export const activeResourceStatuses = ['starting', 'running', 'stopping'] as const;

type Settled = 'stopped' | 'failed';

const maxSummaryLength = 200;

/**
 * A launch failure as callers may see it. Playwright's text goes on with the browser's output,
 * a call log, the command line with every flag and the host's paths: only the first line is
 * kept, without Playwright's method prefix (`browserType.launchPersistentContext: `), absolute
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

/** The host launched the browser: running, at this endpoint. */
export async function recordLaunched(
  em: EntityManager,
  resource: SessionResource,
  launched: { cdpEndpoint: string; pid: number | null; warm: boolean },
) {
  const now = new Date();
  resource.status = 'running';
  resource.cdpEndpoint = launched.cdpEndpoint;
  resource.pid = launched.pid;
  resource.warm = launched.warm;
  resource.startedAt ??= now;
  resource.lastActivity ??= now;
  await Promise.all([
    em.flush(),
    lifecycle(em.fork(), resource, {
      severity: 'info',
      message: `browser running on host ${resource.hostId}`,
      object: { status: 'running' },
    }),
  ]);
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
 * The workflow's own steps: `stopping`, then its end with a reason. Reasons come from the host
 * (Playwright's text with its call log, flags and paths): the row and the resource's log, which
 * callers read, get the summary; the server log the rest.
 */
export async function recordWorkflowStep(
  em: EntityManager,
  resourceId: string,
  change: { status: 'stopping' | Settled; reason?: string },
  log: Logger,
) {
  const resource = await em.findOne(SessionResource, { id: resourceId });
  if (!resource) return;
  const reason = change.reason === undefined ? undefined : summarizeLaunchFailure(change.reason);
  if (reason !== undefined && reason !== change.reason) {
    log.warn({ resourceId, status: change.status, reason: change.reason }, 'browser resource settled');
  }
  resource.status = change.status;
  if (change.status !== 'stopping') {
    resource.stoppedAt ??= new Date();
    resource.stopReason = reason ?? resource.stopReason ?? null;
    resource.cdpEndpoint = null;
  }
  await em.flush();
  await lifecycle(em, resource, {
    severity: change.status === 'failed' ? 'error' : 'info',
    message: change.status === 'stopping' ? 'browser stopping' : `browser ${change.status}: ${reason ?? 'no reason given'}`,
    object: { status: change.status },
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
  const changed = await em.nativeUpdate(
    SessionResource,
    { id: resource.id, status: { $in: [...(outcome.from ?? activeResourceStatuses)] } } as never,
    { status: outcome.status, stopReason: outcome.reason, stoppedAt: new Date(), cdpEndpoint: null },
  );
  if (changed && outcome.severity) {
    await lifecycle(em, resource, {
      severity: outcome.severity,
      message: `browser ${outcome.status}: ${outcome.reason}`,
      object: { status: outcome.status },
    });
  }
  return changed > 0;
}
