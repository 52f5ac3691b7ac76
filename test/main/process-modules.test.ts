import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedDataDirOf } from '../../server/config.ts';
import { freePort } from '../../server/infra/ports.ts';
import { HttpClient } from '../support/http.ts';
import { groupAlive, projectRoot, spawnService } from '../support/processes.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Each process loads only its own code: the api, the control worker and a browser host started
 * from their entry files (server/main/), as production runs them, with a recorder preloaded
 * (test/support/moduleRecorder.ts) that lists every module each resolved, from start to exit.
 * The lint rules say the same from the import graph (.dependency-cruiser.cjs); this is what the
 * processes really load, dynamic imports and packages included.
 */

const START_TIMEOUT_MS = 120_000;

let stack: TestStack;
const recorded = mkdtempSync(path.join(os.tmpdir(), 'bf-modules-'));
const dataDirs: string[] = [];

beforeAll(async () => {
  // No control worker in the test's process: the worker process below serves the stack's queue.
  stack = await startTestStack({}, { controlWorker: false });
}, 120_000);

afterAll(async () => {
  await stack?.close();
  for (const dir of [recorded, ...dataDirs]) rmSync(dir, { recursive: true, force: true });
  for (const dir of dataDirs) rmSync(sharedDataDirOf(dir), { recursive: true, force: true });
}, 120_000);

/**
 * Starts `entry` with the recorder, waits until `ready` says it serves, stops it as a deployment
 * does (SIGTERM) and answers the modules it loaded, as paths relative to the project
 * (`server/main/api.ts`) or from `node_modules/` on (`node_modules/ai/dist/index.mjs`).
 */
async function modulesLoadedBy(entry: string, env: Record<string, string>, ready: (output: string) => Promise<boolean> | boolean) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bf-modules-data-'));
  dataDirs.push(dataDir);
  const service = spawnService(process.execPath, ['--import', './test/support/moduleRecorder.ts', entry], {
    ...process.env,
    ...stack.settings,
    DATA_DIR: dataDir,
    LOADED_MODULES_DIR: recorded,
    LOG_LEVEL: 'info',
    ...env,
  });
  const pid = service.child.pid as number;
  try {
    const until = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      const exited = await Promise.race([service.exited, new Promise<false>((resolve) => setTimeout(() => resolve(false), 250))]);
      if (exited)
        throw new Error(`${entry} exited (${exited.code ?? exited.signal}) before it was ready:\n${service.output().slice(-4000)}`);
      if (await ready(service.output())) break;
      if (Date.now() > until) throw new Error(`${entry} was not ready in ${START_TIMEOUT_MS / 1000} s:\n${service.output().slice(-4000)}`);
    }
    process.kill(-pid, 'SIGTERM');
    const exit = await Promise.race([service.exited, new Promise<false>((resolve) => setTimeout(() => resolve(false), 60_000))]);
    expect(exit, `${entry} did not exit on SIGTERM:\n${service.output().slice(-4000)}`).toEqual({ code: 0, signal: null });
  } finally {
    if (groupAlive(pid)) process.kill(-pid, 'SIGKILL');
  }
  const root = pathToFileURL(projectRoot).href;
  const urls: string[] = JSON.parse(readFileSync(path.join(recorded, `${pid}.json`), 'utf8'));
  return urls
    .filter((url) => url.startsWith('file:'))
    .map((url) => (url.includes('/node_modules/') ? url.slice(url.lastIndexOf('/node_modules/') + 1) : url.replace(root, '')));
}

/** What a browser host must not load: the model side of agent jobs, the AI SDK, node-llama-cpp, billing. */
const modelCodeOrBilling = /^(node_modules\/(ai|@ai-sdk\/[^/]+|node-llama-cpp)\/|server\/billing\/|server\/agents\/model\/)/;
const hostCode = /^server\/browsers\/host\//;
const activities = /^activities\//;

describe('each process loads only its own code', () => {
  it('the api loads no browser host code and no activity', { timeout: START_TIMEOUT_MS + 90_000 }, async () => {
    const port = await freePort();
    const http = new HttpClient(`http://127.0.0.1:${port}`);
    const modules = await modulesLoadedBy(
      'server/main/api.ts',
      { PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` },
      async () => {
        const answer = await http.get('/api').catch(() => undefined);
        return answer?.status === 200;
      },
    );
    // The recorder saw the process: its entry, the app, the Temporal client.
    expect(modules).toEqual(expect.arrayContaining(['server/main/api.ts', 'server/app.ts', 'server/infra/temporalClient.ts']));
    expect(modules.filter((module) => hostCode.test(module) || activities.test(module))).toEqual([]);
    expect(modules).not.toContain('server/main/controlWorker.ts');
  });

  it('the control worker loads its activities, and no browser host activity', { timeout: START_TIMEOUT_MS + 90_000 }, async () => {
    const modules = await modulesLoadedBy('server/main/worker.ts', {}, (output) => output.includes('worker polling task queue'));
    expect(modules).toEqual(expect.arrayContaining(['server/main/controlWorker.ts', 'activities/agentJobs.ts', 'activities/mail.ts']));
    expect(modules.filter((module) => module.startsWith('activities/browserHost'))).toEqual([]);
  });

  it('a browser host loads no model code, AI SDK, node-llama-cpp or billing', { timeout: START_TIMEOUT_MS + 90_000 }, async () => {
    const hostId = `modules-${stack.settings.TEMPORAL_TASK_QUEUE}`;
    const modules = await modulesLoadedBy('server/main/browserHost.ts', { BROWSER_HOST_ID: hostId }, (output) =>
      output.includes(`browser host ${hostId} ready`),
    );
    expect(modules).toEqual(expect.arrayContaining(['server/main/browserHost.ts', 'server/browsers/host/browserHost.ts']));
    expect(modules.filter((module) => modelCodeOrBilling.test(module))).toEqual([]);
    expect(modules).not.toContain('server/main/controlWorker.ts');
  });
});
