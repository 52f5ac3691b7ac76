import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionResource } from '../../db/entities/index.ts';
import { ensureSearchAttributes } from '../../server/infra/searchAttributes.ts';
import { createLogger } from '../../server/logger.ts';
import { searchAttributeKeys } from '../../workflows/contracts/searchAttributes.ts';
import { workflowIds } from '../../workflows/contracts/workflowIds.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import { createPipeline, longWaitSource, settledRun, startRun } from '../support/pipelines.ts';
import { stopAndWait } from '../support/resources.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let owner: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };

beforeAll(async () => {
  stack = await startTestStack({}, { browserHost: true });
  owner = await registerUser(stack);
  project = await createProject(stack, owner.token);
});
afterAll(async () => {
  await stack?.close();
});

/** The ids of the workflows a visibility query finds, once it finds all of `expected` (visibility lags a little). */
async function findWorkflows(client: Client, query: string, expected: string[]) {
  let found: string[] = [];
  await expect
    .poll(
      async () => {
        found = [];
        for await (const execution of client.workflow.list({ query })) found.push(execution.workflowId);
        return found;
      },
      { timeout: 15_000, interval: 300 },
    )
    .toEqual(expect.arrayContaining(expected));
  return found;
}

async function createSession(name: string) {
  const created = await stack.http.put(`/${project.slug}/api/sessions`, { name }, { token: owner.token });
  expect(created.status, created.text).toBe(200);
  return created.body.id as string;
}

describe('Temporal search attributes', () => {
  it('an operator finds a project’s run and the browser it started by ProjectId, PipelineRunId and HostId', async () => {
    const as = { token: owner.token };
    const sessionId = await createSession('searchable');
    const pipelineId = await createPipeline(stack, project.slug, as, longWaitSource(10));
    // Recorded, so it starts a browser of its own (a plain run is a call, in a context of the project's browser).
    const { runId, runUrl } = await startRun(stack, project.slug, as, pipelineId, sessionId, { record: true });
    expect((await settledRun(stack, runUrl, as)).status.pipeline).toBe('succeeded');
    const resource = await stack.orm.em.fork().findOneOrFail(SessionResource, { session: sessionId });
    const hostId = stack.config.browsers.hostId;

    const inProject = await findWorkflows(stack.temporal, `ProjectId = "${project.id}"`, [
      workflowIds.run(runId),
      workflowIds.browser(resource.id),
    ]);
    // Only this project's: another project's workflows on the same Temporal are not listed.
    expect(inProject.every((id) => id === workflowIds.run(runId) || id === workflowIds.browser(resource.id))).toBe(true);
    await findWorkflows(stack.temporal, `PipelineRunId = "${runId}"`, [workflowIds.run(runId), workflowIds.browser(resource.id)]);
    await findWorkflows(stack.temporal, `HostId = "${hostId}" AND PipelineId = "${pipelineId}"`, [workflowIds.run(runId)]);

    const run = await stack.temporal.workflow.getHandle(workflowIds.run(runId)).describe();
    expect(run.typedSearchAttributes.get(searchAttributeKeys.projectId)).toBe(project.id);
    expect(run.typedSearchAttributes.get(searchAttributeKeys.sessionId)).toBe(sessionId);
    expect(run.typedSearchAttributes.get(searchAttributeKeys.pipelineId)).toBe(pipelineId);
    expect(run.typedSearchAttributes.get(searchAttributeKeys.hostId)).toBe(hostId);
    const browser = await stack.temporal.workflow.getHandle(workflowIds.browser(resource.id)).describe();
    expect(browser.typedSearchAttributes.get(searchAttributeKeys.runId)).toBe(runId);
    expect(browser.typedSearchAttributes.get(searchAttributeKeys.sessionId)).toBe(sessionId);
  });

  it('an operator finds a session’s browser started on its own by SessionId', async () => {
    const as = { token: owner.token };
    const sessionId = await createSession('on its own');
    const started = await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/start`, undefined, as);
    expect(started.status, started.text).toBe(200);
    const resourceId = started.body.id as string;
    await findWorkflows(stack.temporal, `SessionId = "${sessionId}"`, [workflowIds.browser(resourceId)]);
    const browser = await stack.temporal.workflow.getHandle(workflowIds.browser(resourceId)).describe();
    expect(browser.typedSearchAttributes.get(searchAttributeKeys.projectId)).toBe(project.id);
    expect(browser.typedSearchAttributes.get(searchAttributeKeys.hostId)).toBe(stack.config.browsers.hostId);
    expect(browser.typedSearchAttributes.get(searchAttributeKeys.runId)).toBeUndefined();
    await stopAndWait(stack.http, `/${project.slug}/api/sessions/${sessionId}/${resourceId}`, as);
  });

  it('a worker registers the search attributes a namespace lacks, once, and says what to run where it cannot', async () => {
    const lines: string[] = [];
    const log = createLogger({ logLevel: 'info' }, { write: (line: string) => void lines.push(line) });
    const { connection } = stack.temporal;
    const namespace = `bare-${randomBytes(4).toString('hex')}`;
    await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    // A namespace just registered may take a moment to be known everywhere in the server.
    let first: Awaited<ReturnType<typeof ensureSearchAttributes>> | undefined;
    await expect
      .poll(
        async () => {
          first = await ensureSearchAttributes(connection.operatorService, namespace, log);
          return first.failed;
        },
        { timeout: 20_000, interval: 500 },
      )
      .toBeUndefined();
    expect(first?.registered.sort()).toEqual(['HostId', 'PipelineId', 'PipelineRunId', 'ProjectId', 'SessionId']);
    const listed = await connection.operatorService.listSearchAttributes({ namespace });
    for (const name of ['ProjectId', 'SessionId', 'PipelineId', 'PipelineRunId', 'HostId'])
      expect(listed.customAttributes?.[name]).toBeDefined();
    expect(await ensureSearchAttributes(connection.operatorService, namespace, log)).toEqual({ registered: [] });

    lines.length = 0;
    const missing = `missing-${randomBytes(4).toString('hex')}`;
    const refused = await ensureSearchAttributes(connection.operatorService, missing, log);
    expect(refused.failed).toBeTruthy();
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string).msg).toContain(
      `temporal operator search-attribute create --namespace ${missing} --name ProjectId --name SessionId --name PipelineId --name PipelineRunId --name HostId --type Keyword`,
    );
  });
});
