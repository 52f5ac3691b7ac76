import type { AnalysisJob, GenerationJob, PipelineRun, SessionResource } from '../../db/entities/index.ts';
import type { EventRecord } from './events.ts';

/**
 * What each event says (docs/webhooks.md, Events). Payloads are thin: ids, states and times, never
 * outputs, arguments or messages a page wrote. Whoever manages a project's webhooks may not be
 * allowed to read its runs' outputs (`webhooks.write` is not `pipelines.read`); the receiver reads
 * the details with its own key, at the URL the payload names.
 */

const iso = (date: Date | null | undefined) => (date ? date.toISOString() : null);
const apiUrl = (publicUrl: string, projectId: string, path: string) => `${publicUrl}/${projectId}/api/${path}`;

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
    started: iso(run.startedAt),
    finished: iso(run.finishedAt),
  };
  if (run.functionVersion) {
    return {
      projectIds: [projectId],
      event: 'function.finished',
      key: `function.finished:${run.id}`,
      data: {
        project: projectId,
        run: {
          ...common,
          functionVersion: run.functionVersion.id,
          function: run.functionVersion.function.id,
          url: apiUrl(publicUrl, projectId, `functions/${run.functionVersion.function.id}/runs/${run.id}`),
        },
      },
    };
  }
  if (!run.pipeline) return null;
  return {
    projectIds: [projectId],
    event: 'run.finished',
    key: `run.finished:${run.id}`,
    data: {
      project: projectId,
      run: {
        ...common,
        pipeline: run.pipeline.id,
        version: run.version?.id ?? null,
        url: apiUrl(publicUrl, projectId, `pipelines/${run.pipeline.id}/${run.id}`),
      },
    },
  };
}

/** `analysis.finished` / `generation.finished`: the job's agent stopped (done, failed or stopped). */
export function agentJobFinished(publicUrl: string, kind: 'analysis' | 'generation', job: AnalysisJob | GenerationJob): EventRecord {
  const projectId = job.project.id;
  return {
    projectIds: [projectId],
    event: kind === 'analysis' ? 'analysis.finished' : 'generation.finished',
    key: `${kind}.finished:${job.id}`,
    data: {
      project: projectId,
      [kind]: {
        id: job.id,
        pipeline: job.pipeline.id,
        status: job.status,
        error: job.error ? { code: job.error.code } : null,
        url: apiUrl(publicUrl, projectId, `${kind}/${job.id}`),
      },
    },
  };
}

/** `session.stopped`: one of a session's browsers stopped or failed. */
export function sessionStopped(publicUrl: string, resource: SessionResource): EventRecord {
  const projectId = resource.project.id;
  const sessionId = resource.session.id;
  return {
    projectIds: [projectId],
    event: 'session.stopped',
    key: `session.stopped:${resource.id}`,
    data: {
      project: projectId,
      session: {
        id: sessionId,
        resource: resource.id,
        status: resource.status,
        reason: resource.stopReason ?? null,
        stopped: iso(resource.stoppedAt),
        url: apiUrl(publicUrl, projectId, `sessions/${sessionId}/${resource.id}`),
      },
    },
  };
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
    data: { account: { available: String(account.available), currency: account.currency }, at: at.toISOString() },
  };
}
