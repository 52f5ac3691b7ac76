import path from 'node:path';
import { Client } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { createAgentJobActivities } from '../../activities/agentJobs.ts';
import { createBillingActivities } from '../../activities/billing.ts';
import { createBrowserSessionActivities } from '../../activities/browserSessions.ts';
import type { ActivityDeps } from '../../activities/deps.ts';
import { createHousekeepingActivities } from '../../activities/housekeeping.ts';
import { createMailActivities } from '../../activities/mail.ts';
import { createPipelineRunActivities } from '../../activities/pipelineRuns.ts';
import { createWebhookActivities } from '../../activities/webhooks.ts';
import {
  type HousekeepingWorkflow,
  housekeepingWorkflowType,
  resourceSweeperWorkflowType,
  runSweeperWorkflowType,
  type SweeperWorkflow,
} from '../../workflows/contracts/periodic.ts';
import { workflowIds } from '../../workflows/contracts/workflowIds.ts';
import { resolveJwtSecret } from '../auth/jwt.ts';
import { ensureSearchAttributes } from '../infra/searchAttributes.ts';
import { engineDeadlines } from '../infra/temporalClient.ts';
import { installTemporalRuntime } from '../infra/temporalRuntime.ts';

export const workflowsPath = path.join(import.meta.dirname, '..', '..', 'workflows', 'index.ts');

/** Bundles the workflow code once; workers created from the bundle start in milliseconds. */
export async function bundleWorkflows() {
  return bundleWorkflowCode({ workflowsPath, logger: quietBundlerLogger });
}

const noop = () => {};
const quietBundlerLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: console.error };

/**
 * Every activity of the control queue, built over its dependencies. Only the control worker's
 * processes (worker.ts, start.ts) load them; a browser host registers its own
 * (server/browsers/host/browserHost.ts), and the api none.
 */
function createControlActivities(deps: ActivityDeps) {
  return {
    ...createMailActivities(deps),
    ...createBrowserSessionActivities(deps),
    ...createPipelineRunActivities(deps),
    ...createHousekeepingActivities(deps),
    ...createAgentJobActivities(deps),
    ...createBillingActivities(deps),
    ...createWebhookActivities(deps),
  };
}

/** The control-queue worker: workflows, and activities that need no browser. */
export async function createControlWorker(
  deps: Omit<ActivityDeps, 'serviceSecret'>,
  options: { address: string; namespace: string; taskQueue: string; workflowBundle?: { code: string } },
) {
  installTemporalRuntime(deps.log);
  const connection = await NativeConnection.connect({ address: options.address });
  // Before this worker runs workflows that start others with them (dry runs), and before the api's
  // starts meet a namespace without them.
  await ensureSearchAttributes(connection.operatorService, options.namespace, deps.log);
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    // The service secret is derived once here, for every activity of the worker.
    activities: createControlActivities({ ...deps, serviceSecret: resolveJwtSecret(deps.config) }),
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath }),
  });
  // The sweeper of stuck browser resources runs once per control queue, as long as the queue is
  // served: every worker makes sure it runs, the first start wins. A client on the worker's own
  // connection (`worker.client` is typed optional for replay workers, and must not skip this);
  // an api in the same process uses it too, for eager workflow starts (AppDeps.eagerStart).
  const client = new Client({ connection, namespace: options.namespace });
  // Likewise the sweeper of pipeline runs nothing settled, and the deletion of expired rows.
  for (const [workflowType, workflowId] of [
    [resourceSweeperWorkflowType, workflowIds.resourceSweeper(options.taskQueue)],
    [runSweeperWorkflowType, workflowIds.runSweeper(options.taskQueue)],
    [housekeepingWorkflowType, workflowIds.housekeeping(options.taskQueue)],
  ] as const) {
    // No arguments: each starts from the beginning.
    await client.workflow.start<SweeperWorkflow | HousekeepingWorkflow>(workflowType, {
      taskQueue: options.taskQueue,
      workflowId,
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
  }
  // The api's calls on this connection have deadlines (the sweepers' starts above wait as long as
  // the engine takes: nothing is waiting on them).
  const apiClient = new Client({
    connection,
    namespace: options.namespace,
    interceptors: { workflow: [engineDeadlines(connection, deps.config.temporal.timeoutMs)] },
  });
  return { worker, connection, client: apiClient };
}
