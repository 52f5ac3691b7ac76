import { expect } from 'vitest';
import { createProject, registerUser } from './accounts.ts';
import type { Credentials } from './http.ts';
import type { TestStack } from './stack.ts';

/** A pipeline in `projectSlug` with `source` as its first version; answers its id. */
export async function createPipeline(stack: TestStack, projectSlug: string, as: Credentials, source: unknown) {
  const created = await stack.http.put(`/${projectSlug}/api/pipelines`, { name: `p-${Date.now()}`, description: '', source }, as);
  expect(created.status, created.text).toBe(200);
  return created.body.id as string;
}

/** The run at `runUrl` once it has ended (succeeded, failed or cancelled), as GET answers it. */
export async function settledRun(stack: TestStack, runUrl: string, as: Credentials, timeout = 60_000) {
  await expect
    .poll(async () => (await stack.http.get(runUrl, as)).body.status.pipeline, { timeout, interval: 300 })
    .toMatch(/succeeded|failed|cancelled/);
  return (await stack.http.get(runUrl, as)).body;
}

/** An analysis or generation job at `url` once its agent has stopped, as GET answers it. */
export async function settledJob(stack: TestStack, url: string, as: Credentials, timeout = 120_000) {
  await expect.poll(async () => (await stack.http.get(url, as)).body.agent, { timeout, interval: 300 }).toBe('stopped');
  return (await stack.http.get(url, as)).body;
}

/** Opens `url` (a test site, test/support/pages.ts) and reads its heading as the output `greeting`. */
export const greetingSource = (url: string) => ({
  nodes: {
    page: { type: 'browser.page' },
    open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url } },
    heading: { type: 'extract.text', timeoutMs: 5000, inputs: { page: { $ref: 'open.page' }, selector: 'h1' } },
  },
  outputs: { greeting: { $ref: 'heading.text' } },
});

/** A run that holds its browser for `ms` (a page, then a wait): what stop and crash tests need under way. */
export const longWaitSource = (ms: number) => ({
  nodes: {
    page: { type: 'browser.page' },
    wait: { type: 'page.wait', timeoutMs: 60_000, inputs: { page: { $ref: 'page.page' }, ms } },
  },
});

/** Starts a run of `pipelineId` on `session`; answers its id and URL. */
export async function startRun(
  stack: TestStack,
  projectSlug: string,
  as: Credentials,
  pipelineId: string,
  session: string,
  options: { record?: boolean } = {},
) {
  const started = await stack.http.post(`/${projectSlug}/api/pipelines/${pipelineId}/start`, { session, ...options }, as);
  expect(started.status, started.text).toBe(200);
  const runId = started.body.id as string;
  return { runId, runUrl: `/${projectSlug}/api/pipelines/${pipelineId}/${runId}` };
}

/** A run's workflow history as text, payloads decoded (base64 in the history's JSON), so a value in them shows. */
export async function historyText(stack: TestStack, runId: string) {
  const history = await stack.temporal.workflow.getHandle(`run-${runId}`).fetchHistory();
  return JSON.stringify(history, (key, value) =>
    key === 'data' && typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : value,
  );
}

/** A new user with a project and one session in it: what a test that runs pipelines starts from. */
export async function userWithSession(stack: TestStack, sessionName = 'runs') {
  const token = (await registerUser(stack)).token;
  const slug = (await createProject(stack, token)).slug;
  const session = await stack.http.put(`/${slug}/api/sessions`, { name: sessionName }, { token });
  expect(session.status, session.text).toBe(200);
  return { token, slug, sessionId: session.body.id as string };
}
