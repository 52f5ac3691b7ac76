import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserHost, PipelineRun, SessionResource } from '../../db/entities/index.ts';
import { callHostFor } from '../../server/browsers/calls/calls.ts';
import { findProcessesMentioning, isAlive } from '../../server/browsers/host/chromium/processes.ts';
import { activeResourceStatuses } from '../../server/browsers/sessions/resourceStatus.ts';
import { sharedDataDirOf } from '../../server/config.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import { browserHostProcess, killBrowsersLeftUnder } from '../support/browserHostProcess.ts';
import { startTestSite } from '../support/pages.ts';
import { createPipeline, longWaitSource, settledRun, startRun } from '../support/pipelines.ts';
import { stopAndWait } from '../support/resources.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Two browser hosts as their own processes; one is killed with SIGKILL while it holds an open
 * session and a pipeline run, and stays dead for a while. No host runs in the test's process.
 */
const suffix = Date.now().toString(36);
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bf-loss-'));
const hostIds = [`loss-a-${suffix}`, `loss-b-${suffix}`];
let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
const hosts = new Map<string, ReturnType<typeof browserHostProcess>>();
let as: { token: string };
let slug: string;

beforeAll(async () => {
  stack = await startTestStack();
  site = await startTestSite();
  for (const hostId of hostIds) {
    const host = browserHostProcess(stack, { hostId, dataDir, env: { BROWSERS_PER_HOST: '3' } });
    host.start();
    hosts.set(hostId, host);
  }
  for (const host of hosts.values()) await host.ready();
  const owner = await registerUser(stack);
  as = { token: owner.token };
  slug = (await createProject(stack, owner.token)).slug;
}, 120_000);

afterAll(async () => {
  for (const host of hosts.values()) await host.kill();
  killBrowsersLeftUnder(dataDir);
  await site?.close();
  await stack?.close();
});

async function startSession(name: string) {
  const session = await stack.http.put(`/${slug}/api/sessions`, { name: `${name}-${Date.now()}` }, as);
  expect(session.status, session.text).toBe(200);
  const started = await stack.http.post(`/${slug}/api/sessions/${session.body.id}/start`, undefined, as);
  expect(started.status, started.text).toBe(200);
  return {
    sessionId: session.body.id as string,
    resource: started.body,
    url: `/${slug}/api/sessions/${session.body.id}/${started.body.id}`,
  };
}

/**
 * A new project of the owner whose calls go to `hostId`: a project's calls go to the live host its
 * id ranks first for (server/browsers/calls/calls.ts), so a few projects are tried (each host
 * ranks first for about half of them).
 */
async function projectCallingOn(hostId: string) {
  for (let tries = 0; tries < 20; tries++) {
    const project = await createProject(stack, as.token);
    if ((await callHostFor(stack.orm.em.fork(), project.id)) === hostId) return project.slug;
  }
  throw new Error(`no project's calls went to ${hostId} in 20 tries`);
}

describe('a browser host that dies and stays dead', () => {
  it('fails its browsers and runs with host_lost within a minute, leaves the other host’s alone, and places new starts on the survivor', async () => {
    const first = await startSession('first');
    const second = await startSession('second');
    // Both hosts empty, then one with a browser: the second start goes to the other host.
    expect(second.resource.host).not.toBe(first.resource.host);
    const victimId = first.resource.host as string;
    const survivorId = second.resource.host as string;
    const victim = hosts.get(victimId) as ReturnType<typeof browserHostProcess>;

    // A run on each session's browser: one held for long on the host that dies, one short on the survivor.
    const doomed = await startRun(stack, slug, as, await createPipeline(stack, slug, as, longWaitSource(50_000)), first.sessionId);
    const spared = await startRun(stack, slug, as, await createPipeline(stack, slug, as, longWaitSource(20_000)), second.sessionId);
    for (const run of [doomed, spared]) {
      await expect
        .poll(async () => (await stack.http.get(run.runUrl, as)).body.nodeOutputs?.page, { timeout: 60_000, interval: 250 })
        .toBeTruthy();
    }
    // A function execution is a call (docs/browsers.md, Contexts for calls): it runs in a context
    // of its project's browser on the host its project ranks first. Its function is put in a
    // project whose calls go to the host that dies.
    const callSlug = await projectCallingOn(victimId);
    const fn = await stack.http.put(
      `/${callSlug}/api/functions`,
      {
        name: 'held',
        description: '',
        slug: `held-${suffix}`,
        definition: { source: longWaitSource(50_000), parameters: [], outputs: [], outputType: 'function' },
      },
      as,
    );
    expect(fn.status, fn.text).toBe(200);
    const execution = stack.http.post(`/${callSlug}/api/functions/slug/held-${suffix}/execute`, { args: {} }, as);
    await expect.poll(() => stack.orm.em.fork().count(PipelineRun, { status: 'running' }), { timeout: 60_000, interval: 250 }).toBe(3);
    // The call holds no browser of its own: only the session's runs on the host that dies.
    await expect
      .poll(() => stack.orm.em.fork().count(SessionResource, { hostId: victimId, status: 'running' }), { timeout: 10_000, interval: 250 })
      .toBe(1);

    const marker = `--user-data-dir=${path.join(sharedDataDirOf(dataDir), 'browsers', victimId)}${path.sep}`;
    await victim.kill();
    const killedAt = Date.now();

    // The open session's browser and the run on the dead host fail within a minute, naming the host.
    await expect.poll(async () => (await stack.http.get(first.url, as)).body.status, { timeout: 60_000, interval: 500 }).toBe('failed');
    const lostResource = (await stack.http.get(first.url, as)).body;
    expect(lostResource.stopReason).toMatch(new RegExp(`^browser host ${victimId} lost: `));
    const run = await settledRun(stack, doomed.runUrl, as, 60_000 - (Date.now() - killedAt));
    expect(Date.now() - killedAt).toBeLessThan(60_000);
    expect(run.status).toEqual({ pipeline: 'failed', 'pipeline-evaluation': 'failed' });
    expect(run.error, JSON.stringify(run.error)).toMatchObject({ node: 'wait', code: 'host_lost' });
    expect(run.error.message).toMatch(new RegExp(`^browser host ${victimId} lost: `));
    // The execution answers the service's fault, retryable, naming the node it was in.
    const executed = await execution;
    expect(executed.status, executed.text).toBe(503);
    expect(executed.body).toMatchObject({
      code: 'host_lost',
      issues: [{ path: ['nodes', expect.stringMatching(/^(page|wait)$/)], code: 'host_lost' }],
    });
    expect(Date.now() - killedAt).toBeLessThan(60_000);
    // Nothing of the dead host is left active.
    await expect
      .poll(() => stack.orm.em.fork().count(SessionResource, { hostId: victimId, status: { $in: [...activeResourceStatuses] } }), {
        timeout: Math.max(1_000, 60_000 - (Date.now() - killedAt)),
        interval: 500,
      })
      .toBe(0);
    const failed = await stack.orm.em.fork().find(SessionResource, { hostId: victimId });
    expect(failed.map((r) => r.status)).toEqual(['failed']);
    for (const r of failed) expect(r.stopReason).toMatch(new RegExp(`^browser host ${victimId} lost: `));

    // New starts go to the survivor (the dead host's row is stale within 15 s of its last heartbeat).
    await expect
      .poll(
        async () => {
          const row = await stack.orm.em.fork().findOne(BrowserHost, { id: victimId });
          return Date.now() - (row?.heartbeatAt.getTime() ?? 0) > 15_000;
        },
        { timeout: 30_000, interval: 500 },
      )
      .toBe(true);
    const third = await startSession('third');
    expect(third.resource.host).toBe(survivorId);

    // The survivor's session and run went on untouched.
    const survived = await settledRun(stack, spared.runUrl, as, 60_000);
    expect(survived.status, JSON.stringify(survived.error)).toEqual({ pipeline: 'succeeded', 'pipeline-evaluation': 'completed' });
    expect((await stack.http.get(second.url, as)).body.status).toBe('running');
    for (const url of [second.url, third.url]) expect((await stopAndWait(stack.http, url, as)).ended.status).toBe('stopped');

    // Back with the same id, the host kills the browsers it no longer owns before it serves.
    // Chromium may have gone down with its host: then a process carrying the marker stands in.
    let planted: Promise<NodeJS.Signals | null> | undefined;
    if (!findProcessesMentioning(marker).length) {
      const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', `${marker}planted`], { stdio: 'ignore' });
      planted = new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
      await expect.poll(() => findProcessesMentioning(marker).length, { timeout: 5_000 }).toBe(1);
    }
    const orphans = findProcessesMentioning(marker);
    victim.clearOutput();
    victim.start();
    await expect.poll(() => victim.alive(), { timeout: 60_000, interval: 250 }).toBe(true);
    if (planted) expect(await planted).toBe('SIGKILL');
    await expect.poll(() => orphans.filter(isAlive), { timeout: 5_000 }).toEqual([]);
    await expect.poll(() => victim.output, { timeout: 5_000 }).toContain('killed browsers left by a previous run of this host');
    // It serves again, and its old browser stays failed.
    expect((await stack.http.get(first.url, as)).body.status).toBe('failed');
  }, 300_000);
});
