import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import { cuttableLink, throughLink } from '../support/cuttableLink.ts';
import { startTestSite } from '../support/pages.ts';
import { createPipeline, settledRun, startRun } from '../support/pipelines.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const link = cuttableLink({ host: '127.0.0.1', port: 5432 });
let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;

beforeAll(async () => {
  await link.open();
  site = await startTestSite();
  // The stack's database goes through a link this test cuts and restores.
  stack = await startTestStack({}, { browserHost: true, databaseUrl: (url) => throughLink(url, link) });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await site?.close();
  await link.cut();
});

describe('a database that goes away', () => {
  it('answers 503 with Retry-After in the error body while it is away, and serves again once it is back', async () => {
    const owner = await registerUser(stack);
    const project = await createProject(stack, owner.token);
    const key = await createApiKey(stack, owner.token, { accessType: 'full' });
    await link.cut();
    try {
      const away = await stack.http.get(`/${project.slug}/api`, { apiKey: key.secret });
      expect(away.status, `${away.text} ${JSON.stringify([...away.headers])}`).toBe(503);
      expect(away.headers.get('retry-after')).toBe('5');
      expect(away.body).toMatchObject({ status: 'error', code: 'service_unavailable' });
      const trpc = await stack.http.get('/trpc/auth.status', { token: owner.token });
      expect(trpc.status).toBe(503);
      expect(trpc.headers.get('retry-after')).toBe('5');
    } finally {
      await link.open();
    }
    await expect
      .poll(async () => (await stack.http.get(`/${project.slug}/api`, { apiKey: key.secret })).status, { timeout: 30_000 })
      .toBe(200);
  });

  it('a pipeline run outlives a 20 s outage: its nodes wait for the database, none fails for it', async () => {
    const owner = await registerUser(stack);
    const as = { token: owner.token };
    const project = await createProject(stack, owner.token);
    const session = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'outage' }, as);
    const pipelineId = await createPipeline(stack, project.slug, as, {
      nodes: {
        page: { type: 'browser.page' },
        pause: { type: 'page.wait', inputs: { page: { $ref: 'page.page' }, ms: 3_000 } },
        open: { type: 'page.goto', inputs: { page: { $ref: 'pause.page' }, url: `${site.url}/after-the-outage` } },
        heading: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: '#greeting' } },
      },
      outputs: { heading: { $ref: 'heading.text' } },
    });
    const { runUrl } = await startRun(stack, project.slug, as, pipelineId, session.body.id);
    await expect.poll(async () => (await stack.http.get(runUrl, as)).body.status.pipeline, { timeout: 30_000 }).toBe('running');
    await link.cut();
    await sleep(20_000);
    await link.open();
    const run = await settledRun(stack, runUrl, as, 120_000);
    expect(run.status.pipeline, JSON.stringify(run.error)).toBe('succeeded');
    expect(run.result).toEqual({ heading: 'Hello from the test site' });
  }, 180_000);
});
