import type { AnalysisJob, GenerationJob, PipelineRun, SessionResource } from '../../db/entities/index.ts';
import { iso } from '../wireShapes.ts';
import type { EventRecord, WebhookEvent } from './events.ts';

/**
 * What each event says (docs/webhooks.md, Events). Payloads are thin: ids, states and times, never
 * outputs, arguments or messages a page wrote. Whoever manages a project's webhooks may not be
 * allowed to read its runs' outputs (`webhooks.write` is not `pipelines.read`); the receiver reads
 * the details with its own key, at the URL the payload names.
 */

const isoOrNull = (date: Date | null | undefined) => (date ? iso(date) : null);

/**
 * An event of one project about one object: keyed `<event>:<objectId>` (recorded once per
 * endpoint), its data the project's id and the object under `name`, with the object's GET as `url`.
 */
function projectEvent(
  event: WebhookEvent,
  objectId: string,
  projectId: string,
  name: string,
  object: Record<string, unknown>,
  link: { publicUrl: string; path: string },
): EventRecord {
  const url = `${link.publicUrl}/${projectId}/api/${link.path}`;
  return { projectIds: [projectId], event, key: `${event}:${objectId}`, data: { project: projectId, [name]: { ...object, url } } };
}

/**
 * `run.finished` for a pipeline's run; `function.finished` for a function's (its `functionVersion`
 * loaded); none for a dry run.
 */
export function runFinished(publicUrl: string, run: PipelineRun): EventRecord | null {
  if (!run.finishedAt || run.generation) return null;
  const projectId = run.project.id;
  const common = {
    id: run.id,
    status: run.status,
    evaluation: run.evaluation,
    error: run.error ? { node: run.error.node ?? null, code: run.error.code } : null,
    created: iso(run.created),
    started: isoOrNull(run.startedAt),
    finished: isoOrNull(run.finishedAt),
  };
  if (run.functionVersion) {
    const functionId = run.functionVersion.function.id;
    return projectEvent(
      'function.finished',
      run.id,
      projectId,
      'run',
      { ...common, functionVersion: run.functionVersion.id, function: functionId },
      { publicUrl, path: `functions/${functionId}/runs/${run.id}` },
    );
  }
  if (!run.pipeline) return null;
  return projectEvent(
    'run.finished',
    run.id,
    projectId,
    'run',
    { ...common, pipeline: run.pipeline.id, version: run.version?.id ?? null },
    { publicUrl, path: `pipelines/${run.pipeline.id}/${run.id}` },
  );
}

/** `analysis.finished` / `generation.finished`: the job's agent stopped (done, failed or stopped). */
export function agentJobFinished(publicUrl: string, kind: 'analysis' | 'generation', job: AnalysisJob | GenerationJob): EventRecord {
  return projectEvent(
    kind === 'analysis' ? 'analysis.finished' : 'generation.finished',
    job.id,
    job.project.id,
    kind,
    { id: job.id, pipeline: job.pipeline.id, status: job.status, error: job.error ? { code: job.error.code } : null },
    { publicUrl, path: `${kind}/${job.id}` },
  );
}

/** `session.stopped`: one of a session's browsers stopped or failed. */
export function sessionStopped(publicUrl: string, resource: SessionResource): EventRecord {
  const sessionId = resource.session.id;
  return projectEvent(
    'session.stopped',
    resource.id,
    resource.project.id,
    'session',
    {
      id: sessionId,
      resource: resource.id,
      status: resource.status,
      reason: resource.stopReason ?? null,
      stopped: isoOrNull(resource.stoppedAt),
    },
    { publicUrl, path: `sessions/${sessionId}/${resource.id}` },
  );
}

/** `funds.low` and `funds.exhausted`: to every project of the account's owner. */
export function fundsEvent(
  event: 'funds.low' | 'funds.exhausted',
  projectIds: string[],
  account: { id: string; currency: string; available: bigint },
  at: Date,
): EventRecord {
  return {
    projectIds,
    event,
    key: `${event}:${account.id}:${at.getTime()}`,
    data: { account: { available: String(account.available), currency: account.currency }, at: iso(at) },
  };
}
