import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, registerUser } from '../support/accounts.ts';
import { browserHostProcess, killBrowsersLeftUnder } from '../support/browserHostProcess.ts';
import { startTestSite } from '../support/pages.ts';
import { createPipeline, historyText, settledRun } from '../support/pipelines.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * A 10-node run whose browser nodes run as one stretch (one activity) on a browser host in its
 * own process, which the test kills or freezes mid-stretch. Every node may be retried once.
 */

const SECRET = 'stretch-secret-5e2d';
/** Each wait node's time: the host is killed or frozen inside one of them. */
const WAIT_MS = 2_000;
const NODES = ['page', 'open', 'typed', 'w1', 'w2', 'w3', 'w4', 'w5', 'heading', 'said'];
const TYPES: Record<string, string> = {
  page: 'browser.page',
  open: 'page.goto',
  typed: 'page.fill',
  heading: 'extract.text',
  said: 'text.template',
};
const typeOf = (node: string) => TYPES[node] ?? 'page.wait';

let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
const hostId = `stretch-${Date.now().toString(36)}`;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bf-stretch-'));
let host: ReturnType<typeof browserHostProcess>;
let as: { token: string };
let projectSlug: string;
let pipelineId: string;

const source = () => {
  const waits = Object.fromEntries(
    [1, 2, 3, 4, 5].map((n) => [
      `w${n}`,
      { type: 'page.wait', retries: 1, inputs: { page: { $ref: n === 1 ? 'typed.page' : `w${n - 1}.page` }, ms: WAIT_MS } },
    ]),
  );
  return {
    parameters: { word: { refType: 'string', secret: true } },
    nodes: {
      page: { type: 'browser.page', retries: 1 },
      open: { type: 'page.goto', retries: 1, inputs: { page: { $ref: 'page.page' }, url: `${site.url}/steps` } },
      typed: { type: 'page.fill', retries: 1, inputs: { page: { $ref: 'open.page' }, selector: '#field', value: { $param: 'word' } } },
      ...waits,
      heading: { type: 'extract.text', retries: 1, inputs: { page: { $ref: 'w5.page' }, selector: 'h1' } },
      said: { type: 'text.template', retries: 1, inputs: { template: '{{h}}: {{w}}', h: { $ref: 'heading.text' }, w: { $param: 'word' } } },
    },
    outputs: { said: { $ref: 'said.text' } },
  };
};

beforeAll(async () => {
  // No browser host in this process: the only one is the process the tests kill.
  stack = await startTestStack();
  site = await startTestSite({
    '/steps': (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<!doctype html><title>steps</title><h1>Steps</h1><input id="field">');
    },
  });
  host = browserHostProcess(stack, { hostId, dataDir });
  host.start();
  const owner = await registerUser(stack);
  as = { token: owner.token };
  projectSlug = (await createProject(stack, owner.token)).slug;
  pipelineId = await createPipeline(stack, projectSlug, as, source());
});

afterAll(async () => {
  host?.thaw();
  await host?.kill();
  killBrowsersLeftUnder(dataDir);
  await site?.close();
  await stack?.close();
});

/**
 * Starts a run on a new session: a call, in a context of the project's browser on the host
 * (docs/browsers.md, Contexts for calls), or, when it records, on a browser of its own (the run
 * starts it on the host, and stops it when done).
 */
async function startStretchRun({ record = false } = {}) {
  const session = await stack.http.put(`/${projectSlug}/api/sessions`, { name: `s-${Date.now()}` }, as);
  const started = await stack.http.post(
    `/${projectSlug}/api/pipelines/${pipelineId}/start`,
    { session: session.body.id, args: { word: SECRET }, record },
    as,
  );
  expect(started.status, started.text).toBe(200);
  const runId = started.body.id as string;
  return { runId, runUrl: `/${projectSlug}/api/pipelines/${pipelineId}/${runId}`, sessionId: session.body.id as string };
}

const storedOutputs = async (runUrl: string) => Object.keys((await stack.http.get(runUrl, as)).body.nodeOutputs ?? {});

/** The run's node log lines, by node. */
async function nodeLines(runUrl: string) {
  const logs = (await stack.http.get(`${runUrl}/logs?limit=200`, as)).body as { context: string; message: string; area: string }[];
  // The node's own lines, not its screenshots'.
  return (node: string) => logs.filter((entry) => entry.context === node && entry.area !== 'screenshot').map((entry) => entry.message);
}

/** The attempts Temporal made of the run's stretch activity, as its history shows them (started events carry the attempt). */
async function stretchAttempts(runId: string) {
  const history = await stack.temporal.workflow.getHandle(`run-${runId}`).fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const started = event.activityTaskStartedEventAttributes;
    return started ? [{ attempt: started.attempt ?? 1, identity: started.identity ?? '' }] : [];
  });
}

describe('a pipeline run whose browser host fails mid-stretch', () => {
  it.each([
    ['a call', false, 'the call’s context died with it'],
    ['a run with a browser of its own (it records)', true, 'the browser died with it'],
  ])(
    'a host killed with -9 and restarted fails %s host_lost at the node it ran, whatever retries it has left; earlier nodes are not run again',
    async (_kind, record, died) => {
      await expect.poll(() => host.alive(), { timeout: 30_000, interval: 250 }).toBe(true);
      const { runId, runUrl, sessionId } = await startStretchRun({ record });
      await expect.poll(() => storedOutputs(runUrl), { timeout: 60_000, interval: 100 }).toContain('w2');
      // Inside w3 (or a later wait node on a slow machine): the kill lands mid-stretch.
      await new Promise((resolve) => setTimeout(resolve, WAIT_MS / 4));
      await host.kill();
      // The same host id: the stretch's retry (its node has one more attempt) goes to its queue.
      host.start();

      const run = await settledRun(stack, runUrl, as, 120_000);
      expect(run.status).toEqual({ pipeline: 'failed', 'pipeline-evaluation': 'failed' });
      // What was stored before the crash is a first part of the nodes, and stays.
      const stored = NODES.filter((node) => Object.hasOwn(run.nodeOutputs, node));
      expect(stored).toEqual(NODES.slice(0, stored.length));
      expect(stored.length).toBeGreaterThanOrEqual(5);
      expect(stored.length).toBeLessThan(NODES.length);
      // The node under way is the one that failed, with `host_lost`: its retry went to the restarted
      // host, which knows it holds none of the browsers the database placed on it when it started
      // (browsers die with their host), whatever attempts the node has left. On a machine too slow to
      // restart the host within the pickup time, the retry times out instead: the host is lost too.
      const failedAt = NODES[stored.length] as string;
      const lines = await nodeLines(runUrl);
      const retriedOnRestartedHost = (await stretchAttempts(runId)).some((started) => started.attempt === 2);
      expect(run.error, JSON.stringify(run.error)).toMatchObject({ node: failedAt, code: 'host_lost' });
      if (retriedOnRestartedHost) {
        expect(run.error.message).toBe(`browser host ${hostId} lost: it was restarted, and ${died}`);
        expect(lines(failedAt)).toContain(`${typeOf(failedAt)} failed: browser host ${hostId} lost: it was restarted, and ${died}`);
      } else {
        expect(run.error.message).toMatch(new RegExp(`^browser host ${hostId} lost: no browser host picked the node up`));
      }
      for (const node of stored) {
        // Run once, before the crash: nothing resumed before them.
        expect(lines(node), node).toEqual([`${typeOf(node)} started`, expect.stringMatching(/ done in \d+ ms$/)]);
      }
      for (const node of NODES.slice(stored.length + 1)) expect(lines(node), node).toEqual([]);

      // The secret is nowhere: not in the run, its logs, nor workflow history (heartbeats included).
      const texts = [
        JSON.stringify(run),
        JSON.stringify((await stack.http.get(`${runUrl}/logs?limit=200`, as)).body),
        await historyText(stack, runId),
      ];
      for (const text of texts) expect(text).not.toContain(SECRET);

      // A call holds no browser resource: its context died with the host.
      if (!record) {
        expect(run.resources).toEqual([]);
        return;
      }
      // The browser the run started is settled: lost with its host (the restarted host does not hold
      // it; docs/browsers.md, Hosts), not stopped as if the run's end had stopped it.
      const resourceId = run.resources[0]?.id;
      await expect
        .poll(async () => (await stack.http.get(`/${projectSlug}/api/sessions/${sessionId}/${resourceId}`, as)).body.status, {
          timeout: 60_000,
          interval: 500,
        })
        .toBe('failed');
      expect((await stack.http.get(`/${projectSlug}/api/sessions/${sessionId}/${resourceId}`, as)).body.stopReason).toMatch(
        new RegExp(`^browser host ${hostId} lost: `),
      );
    },
  );

  it('a host that stalls past its heartbeat timeout resumes the run after the last stored node, and it succeeds', async () => {
    await expect.poll(() => host.alive(), { timeout: 30_000, interval: 250 }).toBe(true);
    const { runId, runUrl } = await startStretchRun();
    await expect.poll(() => storedOutputs(runUrl), { timeout: 60_000, interval: 100 }).toContain('w2');
    const before = await storedOutputs(runUrl);
    host.freeze();
    let heartbeat = '';
    try {
      // Temporal gives the attempt up after 10 s of silence and schedules the next one.
      const workflow = stack.temporal.workflow.getHandle(`run-${runId}`);
      await expect
        .poll(
          async () => {
            const pending = (await workflow.describe()).raw.pendingActivities?.[0];
            heartbeat = (pending?.heartbeatDetails?.payloads ?? [])
              .map((payload) => Buffer.from(payload.data ?? []).toString('utf8'))
              .join('');
            return pending?.attempt ?? 0;
          },
          { timeout: 60_000, interval: 250 },
        )
        .toBeGreaterThanOrEqual(2);
    } finally {
      host.thaw();
    }
    // The progress Temporal kept (it may lag a store behind): nodes done and their outputs, never the secret.
    const progress = JSON.parse(heartbeat);
    expect(progress.done).toBeGreaterThanOrEqual(3);
    expect(progress.outputs).toHaveLength(progress.done);
    expect(heartbeat).not.toContain(SECRET);

    const run = await settledRun(stack, runUrl, as, 120_000);
    expect(run.status, JSON.stringify(run.error)).toEqual({ pipeline: 'succeeded', 'pipeline-evaluation': 'completed' });
    expect(run.result).toEqual({ said: 'Steps: [redacted]' });
    expect(Object.keys(run.nodeOutputs).sort()).toEqual([...NODES].sort());

    const lines = await nodeLines(runUrl);
    // Every node ended once; those stored before the stall ran once.
    for (const node of NODES)
      expect(
        lines(node).filter((line) => line.includes(' done in ')),
        node,
      ).toHaveLength(1);
    for (const node of before)
      expect(
        lines(node).filter((line) => line.endsWith(' started')),
        node,
      ).toHaveLength(1);
    // It went on in a second attempt of the stretch.
    expect((await stretchAttempts(runId)).map((started) => started.attempt)).toContain(2);
    for (const text of [JSON.stringify(run), await historyText(stack, runId)]) expect(text).not.toContain(SECRET);
  });
});
