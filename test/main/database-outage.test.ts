import { setTimeout as sleep } from 'node:timers/promises';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import { cuttableLink, throughLink } from '../support/cuttableLink.ts';
import { startTestSite } from '../support/pages.ts';
import { createPipeline, settledRun, startRun } from '../support/pipelines.ts';
import { stopAndWait } from '../support/resources.ts';
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

  it('a browser’s log keeps every line its page logged while the database was away, in order', async () => {
    const owner = await registerUser(stack);
    const as = { token: owner.token };
    const project = await createProject(stack, owner.token);
    const session = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'log-outage' }, as);
    // An outage before this one left the host's heartbeat stale: starts answer 503 until its next one.
    let started = await stack.http.post(`/${project.slug}/api/sessions/${session.body.id}/start`, undefined, as);
    await expect
      .poll(
        async () => {
          if (started.status !== 200)
            started = await stack.http.post(`/${project.slug}/api/sessions/${session.body.id}/start`, undefined, as);
          return started.status;
        },
        { timeout: 30_000, interval: 500 },
      )
      .toBe(200);
    const resource = `/${project.slug}/api/sessions/${session.body.id}/${started.body.id}`;
    const consoleLines = async () =>
      ((await stack.http.get(`${resource}/logs?limit=200`, as)).body as { area: string; message: string }[])
        .filter((line) => line.area === 'console' && line.message.startsWith('logged '))
        .map((line) => line.message);
    const during = Array.from({ length: 20 }, (_, i) => `logged during the outage ${i}`);
    const browser = await chromium.connectOverCDP(started.body.remoteUrl);
    try {
      const page = await browser.contexts()[0]!.newPage();
      await page.goto(`${site.url}/logging`);
      const say = (text: string) => page.evaluate((line) => console.log(line), text);
      await say('logged before the outage');
      await expect.poll(consoleLines, { timeout: 30_000 }).toEqual(['logged before the outage']);
      await link.cut();
      try {
        // Over 5 s: the host's writes (every 250 ms) fail against the cut link meanwhile.
        for (const line of during) {
          await say(line);
          await sleep(250);
        }
      } finally {
        await link.open();
      }
      await say('logged after the outage');
      await expect
        .poll(consoleLines, { timeout: 60_000, interval: 500 })
        .toEqual(['logged before the outage', ...during, 'logged after the outage']);
    } finally {
      await browser.close();
      await stopAndWait(stack.http, resource, as);
    }
  }, 180_000);
});
