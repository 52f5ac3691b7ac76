import { router } from './base.ts';
import { adminRouter } from './routers/admin.ts';
import { agentJobsRouter } from './routers/agentJobs.ts';
import { apiKeysRouter } from './routers/apiKeys.ts';
import { authRouter } from './routers/auth.ts';
import { billingRouter } from './routers/billing.ts';
import { externalAuthRouter } from './routers/external.ts';
import { functionsRouter } from './routers/functions.ts';
import { mcpClientConfigsRouter } from './routers/mcpClientConfigs.ts';
import { mcpServersRouter } from './routers/mcpServers.ts';
import { passwordRouter } from './routers/password.ts';
import { pipelineNodesRouter } from './routers/pipelineNodes.ts';
import { pipelineRunsRouter } from './routers/pipelineRuns.ts';
import { pipelinesRouter } from './routers/pipelines.ts';
import { projectOverviewRouter } from './routers/projectOverview.ts';
import { projectsRouter } from './routers/projects.ts';
import { proxiesRouter } from './routers/proxies.ts';
import { resourcesRouter } from './routers/resources.ts';
import { rootRouter } from './routers/root.ts';
import { sessionsRouter } from './routers/sessions.ts';
import { twoFactorRouter } from './routers/twoFactor.ts';
import { usersRouter } from './routers/users.ts';
import { webhooksRouter } from './routers/webhooks.ts';

/**
 * The whole API. The REST matcher takes the first path that matches per method, in this order,
 * so routers with static segments come before those whose first segment is `{project}`.
 */
export const appRouter = router({
  root: rootRouter,
  auth: authRouter,
  twoFactor: twoFactorRouter,
  externalAuth: externalAuthRouter,
  password: passwordRouter,
  users: usersRouter,
  admin: adminRouter,
  apiKeys: apiKeysRouter,
  billing: billingRouter,
  projects: projectsRouter,
  pipelineNodes: pipelineNodesRouter,
  sessions: sessionsRouter,
  resources: resourcesRouter,
  proxies: proxiesRouter,
  webhooks: webhooksRouter,
  // After the node catalog (GET …/pipelines/nodes, a static segment) and before the runs router
  // (…/pipelines/{pipelineId}/{runId}), which would otherwise take …/pipelines/versions/{versionId}.
  pipelines: pipelinesRouter,
  // Before the runs router too: …/pipelines/{pipelineId}/{runId} would take …/{pipelineId}/analysis.
  agentJobs: agentJobsRouter,
  pipelineRuns: pipelineRunsRouter,
  functions: functionsRouter,
  mcpServers: mcpServersRouter,
  mcpClientConfigs: mcpClientConfigsRouter,
  // The console's runs overview and project usage (issue 37): tRPC only, no REST route.
  projectOverview: projectOverviewRouter,
});

export type AppRouter = typeof appRouter;
