import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedDataDirOf } from '../../server/config.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import { startTestSite } from '../support/pages.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bf-worker-'));
let worker: ChildProcess | undefined;

/**
 * The control worker as its own process, as production runs it, serving the stack's control
 * queue; resolves once it polls. Its own process group, so a kill takes anything it started.
 */
async function startWorkerProcess() {
  const child = spawn(process.execPath, ['server/main/worker.ts'], {
    cwd: path.join(import.meta.dirname, '..', '..'),
    env: {
      ...process.env,
      NODE_ENV: 'test',
      DATABASE_URL: stack.config.databaseUrl,
      TEMPORAL_ADDRESS: stack.config.temporal.address,
      TEMPORAL_TASK_QUEUE: stack.config.temporal.taskQueue,
      JWT_SECRET: stack.config.jwtSecret,
      SMTP_URL: stack.config.mail.smtpUrl,
      DATA_DIR: dataDir,
      // Info, for the line that says it polls; warnings and worse are passed on below.
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  worker = child;
  const ready = new Promise<void>((resolve, reject) => {
    child.once('exit', (code, signal) => reject(new Error(`the worker exited before polling (${code ?? signal})`)));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      if (line.includes('worker polling task queue')) resolve();
      else if (/"level":(4|5|6)\d/.test(line)) process.stderr.write(`worker: ${line}\n`);
    });
  });
  // Bundling the workflow code at start takes a while on a slow machine.
  await withTimeout(ready, 90_000, 'the worker did not start polling');
  return child;
}

async function killWorkerProcess(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-(child.pid as number), 'SIGKILL');
  await exited;
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

beforeAll(async () => {
  // Browser nodes run on the host in this process; the control queue only on the worker process.
  stack = await startTestStack({}, { browserHost: true, controlWorker: false });
  site = await startTestSite();
});
afterAll(async () => {
  if (worker) await killWorkerProcess(worker);
  await site?.close();
  await stack?.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(sharedDataDirOf(dataDir), { recursive: true, force: true });
});

describe('a control worker that dies', () => {
  it('a run whose control worker is killed mid-run finishes on the restarted worker', { timeout: 240_000 }, async () => {
    const first = await startWorkerProcess();
    const owner = await registerUser(stack);
    const project = await createProject(stack, owner.token);
    const session = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'worker-crash' }, { token: owner.token });
    const pipeline = await stack.http.put(
      `/${project.slug}/api/pipelines`,
      {
        name: 'outlives-its-worker',
        source: {
          nodes: {
            page: { type: 'browser.page' },
            open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/survivor` } },
            // The worker is killed while this runs on the browser host.
            pause: { type: 'page.wait', inputs: { page: { $ref: 'open.page' }, ms: 10_000 } },
            heading: { type: 'extract.text', inputs: { page: { $ref: 'pause.page' }, selector: '#greeting' } },
            line: { type: 'text.template', inputs: { template: 'seen: {{heading}}', heading: { $ref: 'heading.text' } } },
          },
          outputs: { line: { $ref: 'line.text' } },
        },
      },
      { token: owner.token },
    );
    expect(pipeline.status, pipeline.text).toBe(200);
    const started = await stack.http.post(
      `/${project.slug}/api/pipelines/${pipeline.body.id}/start`,
      { session: session.body.id },
      { token: owner.token },
    );
    expect(started.status, started.text).toBe(200);
    const runId = started.body.id as string;
    const runUrl = `/${project.slug}/api/pipelines/${pipeline.body.id}/${runId}`;
    const getRun = async () => (await stack.http.get(runUrl, { token: owner.token })).body;
    await expect.poll(async () => (await getRun()).nodeOutputs.open, { timeout: 60_000, interval: 200 }).toBeTruthy();
    const before = await getRun();
    expect(before.status.pipeline).toBe('running');
    // Killed while the pause runs: nothing after it has been done by the first worker.
    expect(before.nodeOutputs.pause).toBeUndefined();

    await killWorkerProcess(first);
    const second = await startWorkerProcess();

    // It ends, and ends well: never left `running`.
    await expect
      .poll(async () => (await getRun()).status.pipeline, { timeout: 90_000, interval: 500 })
      .toMatch(/succeeded|failed|cancelled/);
    const run = await getRun();
    expect(run.status, JSON.stringify(run.error)).toEqual({ pipeline: 'succeeded', 'pipeline-evaluation': 'completed' });
    expect(run.result).toEqual({ line: 'seen: Hello from the test site' });

    // The run's workflow and its last node really went on in the new process.
    const history = await stack.temporal.workflow.getHandle(`run-${runId}`).fetchHistory();
    const identities = (history.events ?? []).flatMap((event) => [
      event.workflowTaskCompletedEventAttributes?.identity,
      event.activityTaskStartedEventAttributes?.identity,
    ]);
    expect(identities).toContain(`${first.pid}@${os.hostname()}`);
    expect(identities).toContain(`${second.pid}@${os.hostname()}`);

    // The run is a call (docs/browsers.md, Contexts for calls): no browser resource of its own, and
    // its context, opened by the first worker's run, is closed with its end under the second.
    expect(run.resources).toEqual([]);
    const calls = stack.browserHost?.projectBrowsers as NonNullable<TestStack['browserHost']>['projectBrowsers'];
    await expect.poll(() => calls.has(runId), { timeout: 60_000, interval: 500 }).toBe(false);
  });
});
