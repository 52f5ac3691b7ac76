import { existsSync, readFileSync, statfsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionResource } from '../../../db/entities/index.ts';
import { BROWSER_OUT_OF_MEMORY } from '../../../workflows/browserSession.ts';
import { createProject, registerUser } from '../../support/accounts.ts';
import { startTestSite } from '../../support/pages.ts';
import { createPipeline, settledRun, startRun } from '../../support/pipelines.ts';
import { chromiumProcesses } from '../../support/sandbox.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';

/**
 * Every browser is bounded (docs/browsers.md, "Every browser is bounded"): a page that takes more
 * memory than BROWSER_MEMORY_LIMIT_MB ends its browser alone, `out of memory`, while the service
 * and the host's other browsers carry on; a page that writes more than BROWSER_DISK_LIMIT_MB gets
 * a quota error, and the host's disk never sees the bytes.
 */

const MB = 2 ** 20;
let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
let as: { token: string };
let project: { id: string; slug: string };

beforeAll(async () => {
  stack = await startTestStack({ BROWSER_MEMORY_LIMIT_MB: '768', BROWSER_DISK_LIMIT_MB: '256' }, { browserHost: true });
  site = await startTestSite();
  const owner = await registerUser(stack);
  as = { token: owner.token };
  project = await createProject(stack, owner.token);
}, 120_000);
afterAll(async () => {
  await site?.close();
  await stack?.close();
});

type Started = { url: string; remoteUrl: string };

async function startBrowser(name: string): Promise<Started> {
  const sessionId = (await stack.http.put(`/${project.slug}/api/sessions`, { name }, as)).body.id as string;
  const started = await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/start`, undefined, as);
  expect(started.status, started.text).toBe(200);
  return { url: `/${project.slug}/api/sessions/${sessionId}/${started.body.id}`, remoteUrl: started.body.remoteUrl };
}

async function withPage<T>(started: Started, work: (page: import('playwright-core').Page) => Promise<T>) {
  const browser: Browser = await chromium.connectOverCDP(started.remoteUrl);
  try {
    const context = browser.contexts()[0] ?? (await browser.newContext());
    const page = await context.newPage();
    await page.goto(`${site.url}/`);
    return await work(page);
  } finally {
    await browser.close().catch(() => {});
  }
}

describe('a browser’s memory', () => {
  it('a page cannot hold 1.5 GB: its browser alone ends, out of memory, and the service answers throughout', async () => {
    const greedy = await startBrowser('greedy');
    const neighbour = await startBrowser('neighbour');
    // The service answers while the page grows and after: a request every 200 ms, each must succeed.
    const answers: number[] = [];
    let asking = true;
    const asker = (async () => {
      while (asking) {
        answers.push(
          await stack.http.get(`/${project.slug}/api/sessions`, as).then(
            (answer) => answer.status,
            () => 0,
          ),
        );
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    const held = await withPage(greedy, (page) =>
      page
        .evaluate(async (chunkMb) => {
          const kept: Uint8Array[] = [];
          (globalThis as { kept?: unknown }).kept = kept;
          for (let held = 0; held < 1536; held += chunkMb) {
            const chunk = new Uint8Array(chunkMb * 1024 * 1024);
            // Touched, so every page of it is really there.
            for (let i = 0; i < chunk.length; i += 4096) chunk[i] = 1;
            kept.push(chunk);
            await new Promise((resolve) => setTimeout(resolve, 0));
          }
          return 'held 1.5 GB';
        }, 64)
        .catch((error: unknown) => `refused: ${String(error).split('\n')[0]}`),
    );
    expect(held).toMatch(/^refused/);
    await expect
      .poll(
        async () => {
          const resource = (await stack.http.get(greedy.url, as)).body;
          return `${resource.status}: ${resource.stopReason}`;
        },
        { timeout: 30_000, interval: 300 },
      )
      .toBe(`stopped: ${BROWSER_OUT_OF_MEMORY}`);

    // The other browser of the host goes on as before.
    expect((await stack.http.get(neighbour.url, as)).body.status).toBe('running');
    expect(await withPage(neighbour, (page) => page.evaluate(() => document.title))).toBe('Test page');
    asking = false;
    await asker;
    expect(answers.length).toBeGreaterThan(3);
    expect(new Set(answers)).toEqual(new Set([200]));
  }, 180_000);

  it('a run whose page takes 1.5 GB fails browser_crashed, saying out of memory', async () => {
    const sessionId = (await stack.http.put(`/${project.slug}/api/sessions`, { name: 'greedy-run' }, as)).body.id as string;
    const pipelineId = await createPipeline(stack, project.slug, as, {
      nodes: {
        page: { type: 'browser.page' },
        grow: {
          type: 'page.evaluate',
          timeoutMs: 60_000,
          inputs: {
            page: { $ref: 'page.page' },
            script: `const kept = []; globalThis.kept = kept;
              for (let held = 0; held < 1536; held += 64) {
                const chunk = new Uint8Array(64 * 1024 * 1024);
                for (let i = 0; i < chunk.length; i += 4096) chunk[i] = 1;
                kept.push(chunk);
                await new Promise((resolve) => setTimeout(resolve, 0));
              }
              return 'held 1.5 GB';`,
          },
        },
      },
    });
    const { runUrl } = await startRun(stack, project.slug, as, pipelineId, sessionId);
    const run = await settledRun(stack, runUrl, as, 90_000);
    expect(run.status.pipeline, JSON.stringify(run.error)).toBe('failed');
    expect(run.error).toMatchObject({ node: 'grow', code: 'browser_crashed' });
    expect(run.error.message).toMatch(/out of memory/);
  }, 180_000);

  it('a browser cannot raise its own limits: its processes are in a leaf below the group that holds its limits, and no cgroup file system is in its sandbox', async () => {
    const started = await startBrowser('own-limits');
    const row = await stack.orm.em.fork().findOneOrFail(SessionResource, { id: started.url.split('/').at(-1) as string });
    const processes = chromiumProcesses(row.pid as number);
    expect(processes.length).toBeGreaterThan(1);
    // This machine (and CI) is cgroup v1: test/browsers/host/browser-cgroups.test.ts covers v2's choices.
    const leafOfBrowser = readFileSync(`/proc/${row.pid}/cgroup`, 'utf8').match(/^\d+:memory:(.*)$/m)?.[1];
    expect(leafOfBrowser).toMatch(/\/browserflow-[0-9a-f]{12}\/[0-9a-f]{16}\/run$/);
    for (const facts of processes) {
      // Its cgroup namespace (bubblewrap's) is rooted at the leaf: the group's limit files are
      // outside anything it could mount (test/browsers/host/browser-cgroups.test.ts tries).
      expect(readFileSync(`/proc/${facts.pid}/cgroup`, 'utf8')).toContain(`:memory:${leafOfBrowser}\n`);
      expect(existsSync(`/proc/${facts.pid}/root/sys/fs/cgroup/memory`), `${facts.command} sees the cgroups`).toBe(false);
    }
    const group = `/sys/fs/cgroup/memory${leafOfBrowser?.replace(/\/run$/, '')}`;
    expect(readFileSync(`${group}/memory.limit_in_bytes`, 'utf8').trim()).toBe(String(768 * MB));
    expect(readFileSync(`${group}/memory.use_hierarchy`, 'utf8').trim()).toBe('1');
    await stack.http.post(`${started.url}/stop`, undefined, as);
  });
});

describe('a browser’s disk', () => {
  it('a page cannot store 384 MB: IndexedDB refuses it with a quota error, and the host’s disk does not grow by it', async () => {
    const started = await startBrowser('writer');
    const freeBefore = (() => {
      const fs = statfsSync(stack.config.dataDir);
      return fs.bavail * fs.bsize;
    })();
    const outcome = await withPage(started, (page) =>
      page.evaluate(async (chunkMb) => {
        const db = await new Promise<IDBDatabase>((resolve, reject) => {
          const opening = indexedDB.open('fill', 1);
          opening.onupgradeneeded = () => opening.result.createObjectStore('chunks');
          opening.onsuccess = () => resolve(opening.result);
          opening.onerror = () => reject(opening.error);
        });
        let stored = 0;
        try {
          for (let i = 0; stored < 384; i++) {
            // Random bytes: nothing on the way may compress them away.
            const chunk = new Uint8Array(chunkMb * 1024 * 1024);
            for (let at = 0; at < chunk.length; at += 65536) crypto.getRandomValues(chunk.subarray(at, at + 65536));
            await new Promise<void>((resolve, reject) => {
              const tx = db.transaction('chunks', 'readwrite');
              tx.objectStore('chunks').put(new Blob([chunk]), i);
              tx.oncomplete = () => resolve();
              tx.onabort = () => reject(tx.error);
              tx.onerror = () => reject(tx.error);
            });
            stored += chunkMb;
          }
          return { stored, error: null };
        } catch (error) {
          return { stored, error: (error as DOMException).name };
        }
      }, 16),
    );
    expect(outcome.error).toBe('QuotaExceededError');
    expect(outcome.stored).toBeLessThan(256);
    const fs = statfsSync(stack.config.dataDir);
    // The machine is shared: other work may write meanwhile, but not the 384 MB, nor the refused part.
    expect((freeBefore - fs.bavail * fs.bsize) / MB).toBeLessThan(128);
    // The browser goes on.
    expect((await stack.http.get(started.url, as)).body.status).toBe('running');
  }, 180_000);
});
