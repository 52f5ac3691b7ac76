import { expect } from 'vitest';
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
