import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserHost } from '../db/entities/index.ts';
import { findProcessesMentioning } from '../server/browsers/host/processes.ts';
import { createProject, registerUser } from './support/accounts.ts';
import { startTestSite } from './support/pages.ts';
import { startTestStack, type TestStack } from './support/stack.ts';

let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
const hostId = `crash-${Date.now().toString(36)}`;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bf-host-'));
const browsersDir = path.join(dataDir, 'browsers', hostId);
let host: ChildProcess | undefined;

/** The browser host as its own process, as production runs it. */
function startHostProcess() {
  const child = spawn(process.execPath, ['server/main/browserHost.ts'], {
    cwd: path.join(import.meta.dirname, '..'),
    env: {
      ...process.env,
      NODE_ENV: 'test',
      DATABASE_URL: stack.config.databaseUrl,
      TEMPORAL_ADDRESS: stack.config.temporal.address,
      BROWSER_HOST_ID: hostId,
      DATA_DIR: dataDir,
      BROWSER_WARM_POOL: '0',
      JWT_SECRET: stack.config.jwtSecret,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return child;
}

async function hostAlive() {
  const row = await stack.orm.em.fork().findOne(BrowserHost, { id: hostId });
  return Boolean(row && Date.now() - row.heartbeatAt.getTime() < 10_000);
}

beforeAll(async () => {
  stack = await startTestStack();
  site = await startTestSite();
});
afterAll(async () => {
  host?.kill('SIGKILL');
  await site?.close();
  await stack?.close();
});

describe('a browser host that dies', () => {
  it('leaves no browser running or stuck: the resource settles as stopped and the restarted host cleans up', async () => {
    host = startHostProcess();
    await expect.poll(hostAlive, { timeout: 30_000, interval: 250 }).toBe(true);

    const owner = await registerUser(stack);
    const project = await createProject(stack, owner.token);
    const created = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'crash' }, { token: owner.token });
    const sessionId = created.body.id;
    const started = await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/start`, undefined, { token: owner.token });
    expect(started.status, started.text).toBe(200);
    expect(started.body.host).toBe(hostId);

    // Puppeteer uses the same remoteUrl as Playwright, as is.
    const browser = await puppeteer.connect({ browserWSEndpoint: started.body.remoteUrl });
    const page = await browser.newPage();
    await page.goto(`${site.url}/before-crash`);
    expect(await page.$eval('#greeting', (el) => el.textContent)).toBe('Hello from the test site');
    await browser.disconnect();
    expect(findProcessesMentioning(browsersDir).length).toBeGreaterThan(0);

    host.kill('SIGKILL');
    await new Promise((resolve) => host?.once('exit', resolve));
    host = startHostProcess();
    await expect.poll(hostAlive, { timeout: 30_000, interval: 250 }).toBe(true);

    const resourceUrl = `/${project.slug}/api/sessions/${sessionId}/${started.body.id}`;
    await expect
      .poll(async () => (await stack.http.get(resourceUrl, { token: owner.token })).body.status, { timeout: 60_000, interval: 500 })
      .toBe('stopped');
    const resource = await stack.http.get(resourceUrl, { token: owner.token });
    expect(resource.body.stopReason).toMatch(/exited|lost/);
    expect(findProcessesMentioning(browsersDir)).toEqual([]);
    const described = await stack.temporal.workflow.getHandle(`browser-${started.body.id}`).describe();
    expect(described.status.name).toBe('COMPLETED');

    // The restarted host serves new browsers.
    const again = await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/start`, undefined, { token: owner.token });
    expect(again.status, again.text).toBe(200);
    const stopped = await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/${again.body.id}/stop`, undefined, {
      token: owner.token,
    });
    expect(stopped.body.status).toBe('stopped');
  });

  it('fails a pipeline run cleanly, naming the node, when its host dies mid-node', async () => {
    host?.kill('SIGKILL');
    host = startHostProcess();
    await expect.poll(hostAlive, { timeout: 30_000, interval: 250 }).toBe(true);
    const owner = await registerUser(stack);
    const project = await createProject(stack, owner.token);
    const session = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'run-crash' }, { token: owner.token });
    const pipeline = await stack.http.put(
      `/${project.slug}/api/pipelines`,
      {
        name: 'slow',
        source: {
          nodes: {
            page: { type: 'browser.page' },
            wait: { type: 'page.wait', timeoutMs: 120_000, inputs: { page: { $ref: 'page.page' }, ms: 60_000 } },
          },
        },
      },
      { token: owner.token },
    );
    const started = await stack.http.post(
      `/${project.slug}/api/pipelines/${pipeline.body.id}/start`,
      { session: session.body.id },
      { token: owner.token },
    );
    expect(started.status, started.text).toBe(200);
    const runUrl = `/${project.slug}/api/pipelines/${pipeline.body.id}/${started.body.id}`;
    await expect
      .poll(async () => (await stack.http.get(runUrl, { token: owner.token })).body.nodeOutputs.page, { timeout: 30_000 })
      .toBeTruthy();

    host.kill('SIGKILL');
    await new Promise((resolve) => host?.once('exit', resolve));
    host = startHostProcess();

    await expect
      .poll(async () => (await stack.http.get(runUrl, { token: owner.token })).body.status.pipeline, { timeout: 90_000, interval: 500 })
      .toBe('failed');
    const run = (await stack.http.get(runUrl, { token: owner.token })).body;
    expect(run.status['pipeline-evaluation']).toBe('failed');
    expect(run.error.node).toBe('wait');
    // The browser the run started is settled too, and nothing is left running on the host.
    await expect
      .poll(
        async () =>
          (await stack.http.get(`/${project.slug}/api/sessions/${session.body.id}/${run.resources[0]?.id}`, { token: owner.token })).body
            .status,
        {
          timeout: 60_000,
          interval: 500,
        },
      )
      .toBe('stopped');
    expect(findProcessesMentioning(browsersDir)).toEqual([]);
  });
});
