import { randomBytes } from 'node:crypto';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrowserflowClient } from '../../../client/index.ts';
import { startTestSite } from '../../support/pages.ts';
import { createPipeline, settledRun, startRun, userWithSession } from '../../support/pipelines.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';

/**
 * A browser's downloads, end to end on the real stack: a pipeline's `page.download` fetches files
 * a local site makes (a link with `download`, a Blob a button builds, a response with
 * Content-Disposition); they are listed, fetched byte for byte and deleted through the API, and no
 * byte of them is left on the host outside the browser's own folder. A remoteUrl client naming
 * its own folder still gets the browser's; a download past DOWNLOAD_MAX_BYTES is cancelled.
 */

const MAX_BYTES = 300_000;
/** In each file's name, and in its content: told apart, since a run's history holds the names (not the content). */
const nameMark = `n${randomBytes(6).toString('hex')}`;
const contentMark = `c${randomBytes(6).toString('hex')}`;
const linkCsv = `id,mark\n1,${contentMark}-link\n2,"quoted, field"\n`;
const servedCsv = `id,mark\n1,${contentMark}-served\n`;
const builtCsv = `id,mark\n1,${contentMark}-built\n`;

let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
let user: Awaited<ReturnType<typeof userWithSession>>;
const started = Date.now();

beforeAll(async () => {
  stack = await startTestStack({ DOWNLOAD_MAX_BYTES: String(MAX_BYTES) }, { browserHost: true });
  const attachment = (name: string, body: string | Buffer) => (_req: unknown, res: import('node:http').ServerResponse) => {
    res.setHeader('content-type', 'text/csv');
    res.setHeader('content-disposition', `attachment; filename="${name}"`);
    res.end(body);
  };
  site = await startTestSite({
    '/reports': (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<!doctype html><title>Reports</title>
<a id="link" href="/report.csv" download="link-${nameMark}.csv">CSV</a>
<button id="build">Build</button>
<script>
document.getElementById('build').onclick = () => {
  const blob = new Blob([${JSON.stringify(builtCsv)}], { type: 'text/csv' });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = 'built-${nameMark}.csv';
  document.body.append(a);
  a.click();
};
</script>`);
    },
    '/report.csv': attachment(`link-${nameMark}.csv`, linkCsv),
    '/export': attachment(`served-${nameMark}.csv`, servedCsv),
    // Past the bound, slowly, so the host sees it grow.
    '/big.bin': (_req, res) => {
      res.setHeader('content-type', 'application/octet-stream');
      res.setHeader('content-disposition', `attachment; filename="big-${nameMark}.bin"`);
      let sent = 0;
      const more = () => {
        if (sent >= 4 * MAX_BYTES || res.destroyed) return res.end();
        sent += 64 * 1024;
        res.write(Buffer.alloc(64 * 1024, 120), () => setTimeout(more, 40));
      };
      more();
    },
  });
  user = await userWithSession(stack, 'downloads');
});
afterAll(async () => {
  await site?.close();
  await stack?.close();
});

type FileView = { id: string; name: string; size: number; mimeType: string; url: string; sourceUrl: string; created: string };

const as = () => ({ token: user.token });

async function listed(resourcePath: string) {
  const list = await stack.http.get(`${resourcePath}/downloads`, as());
  expect(list.status, list.text).toBe(200);
  return list.body as FileView[];
}

/** The bytes at a file's `url`, with the headers they came with. */
async function fetched(url: string) {
  const response = await fetch(url, { headers: { authorization: `Bearer ${user.token}` } });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

/**
 * Files under `roots` changed since the test began whose name holds `nameMark` or whose content
 * holds `contentMark`: a download that reached the host's disk anywhere there.
 */
function leftOnHost(roots: string[]) {
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const full = path.join(dir, name);
      let stat: ReturnType<typeof lstatSync>;
      try {
        stat = lstatSync(full);
      } catch {
        continue;
      }
      if (stat.isSymbolicLink()) continue;
      if (stat.isDirectory()) {
        if (depth < 8 && name !== 'node_modules' && name !== '.git') walk(full, depth + 1);
        continue;
      }
      if (!stat.isFile() || stat.mtimeMs < started - 1000) continue;
      if (name.includes(nameMark)) found.push(full);
      else if (stat.size < 20_000_000) {
        try {
          if (readFileSync(full).includes(contentMark)) found.push(full);
        } catch {
          // gone, or not ours to read
        }
      }
    }
  };
  for (const root of roots) walk(root, 0);
  return found;
}

describe('downloads', () => {
  it('a pipeline downloads generated CSVs; they are listed, fetched byte for byte and deleted, and nothing of them is on the host', async () => {
    const pipelineId = await createPipeline(stack, user.slug, as(), {
      nodes: {
        page: { type: 'browser.page' },
        open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/reports` } },
        link: { type: 'page.download', inputs: { page: { $ref: 'open.page' }, selector: '#link' } },
        built: { type: 'page.download', inputs: { page: { $ref: 'link.page' }, selector: '#build' } },
        served: { type: 'page.download', inputs: { page: { $ref: 'built.page' }, url: `${site.url}/export` } },
      },
      outputs: { link: { $ref: 'link.file' }, built: { $ref: 'built.file' }, served: { $ref: 'served.file' } },
    });
    const { runUrl } = await startRun(stack, user.slug, as(), pipelineId, user.sessionId);
    const run = await settledRun(stack, runUrl, as(), 120_000);
    expect(run.status.pipeline, JSON.stringify(run.error)).toBe('succeeded');
    const resourceId = run.resources[0]?.id as string;
    const resourcePath = `/${user.slug}/api/sessions/${user.sessionId}/${resourceId}`;

    // The run's outputs are references to the files, whose `url` serves them.
    const result = run.result as Record<string, FileView>;
    expect(result.link).toMatchObject({ name: `link-${nameMark}.csv`, size: linkCsv.length, mimeType: 'text/csv' });
    expect(result.built).toMatchObject({ name: `built-${nameMark}.csv`, size: builtCsv.length, mimeType: 'text/csv' });
    expect(result.served).toMatchObject({ name: `served-${nameMark}.csv`, size: servedCsv.length, mimeType: 'text/csv' });
    // The project by its slug, as in the list's `url` and every other link of the API.
    for (const file of Object.values(result)) expect(file.url).toBe(`${stack.config.publicUrl}${resourcePath}/downloads/${file.id}`);

    const files = await listed(resourcePath);
    expect(files.map((file) => file.name).sort()).toEqual([`built-${nameMark}.csv`, `link-${nameMark}.csv`, `served-${nameMark}.csv`]);
    expect(files.find((file) => file.name.startsWith('served'))?.sourceUrl).toBe(`${site.url}/export`);
    expect(files.find((file) => file.name.startsWith('built'))?.sourceUrl).toBe('blob:');
    for (const [name, content] of [
      ['link', linkCsv],
      ['built', builtCsv],
      ['served', servedCsv],
    ] as const) {
      const file = files.find((f) => f.name.startsWith(name)) as FileView;
      expect(file.id).toBe(result[name]?.id);
      expect(Date.parse(file.created)).toBeGreaterThan(started);
      const got = await fetched(file.url);
      expect(got.status).toBe(200);
      expect(got.bytes.equals(Buffer.from(content))).toBe(true);
      expect(got.headers.get('content-type')).toMatch(/^text\/csv/);
      expect(got.headers.get('content-disposition')).toBe(`attachment; filename="${file.name}"; filename*=UTF-8''${file.name}`);
      expect(got.headers.get('x-content-type-options')).toBe('nosniff');
    }

    // The SDK lists and fetches them alike.
    const sdk = createBrowserflowClient({ url: stack.url, token: user.token });
    const listedBySdk = await sdk.resources.downloads.query({ project: user.slug, sessionId: user.sessionId, resourceId });
    expect(listedBySdk).toEqual(files);
    const built = files.find((f) => f.name.startsWith('built')) as FileView;
    expect(Buffer.from(await sdk.download(built)).equals(Buffer.from(builtCsv))).toBe(true);

    // Nothing of them on the host: not in HOME, the temporary folder, nor the stack's data folders.
    const dataDir = path.dirname(stack.config.dataDir);
    expect(leftOnHost([os.homedir(), os.tmpdir(), dataDir])).toEqual([]);
    // (The search finds such a file where there is one.)
    const decoy = mkdtempSync(path.join(os.tmpdir(), 'bf-decoy-'));
    writeFileSync(path.join(decoy, 'copy.csv'), linkCsv);
    expect(leftOnHost([os.tmpdir()])).toEqual([path.join(decoy, 'copy.csv')]);
    rmSync(decoy, { recursive: true });

    // Deleted through the API: gone from the list and from its URL.
    const link = files.find((f) => f.name.startsWith('link')) as FileView;
    const deleted = await stack.http.delete(`${resourcePath}/downloads/${link.id}`, as());
    expect(deleted.status, deleted.text).toBe(200);
    expect((await listed(resourcePath)).map((file) => file.id)).not.toContain(link.id);
    expect((await fetched(link.url)).status).toBe(404);
    expect((await stack.http.delete(`${resourcePath}/downloads/${link.id}`, as())).status).toBe(404);
  });

  it('a remoteUrl client that names its own folder still saves into the browser’s', async () => {
    const startedResource = await stack.http.post(`/${user.slug}/api/sessions/${user.sessionId}/start`, undefined, as());
    expect(startedResource.status, startedResource.text).toBe(200);
    const resource = startedResource.body as { id: string; remoteUrl: string };
    const resourcePath = `/${user.slug}/api/sessions/${user.sessionId}/${resource.id}`;
    const before = (await listed(resourcePath)).length;
    const folder = mkdtempSync(path.join(os.tmpdir(), 'bf-client-downloads-'));
    const browser = await chromium.connectOverCDP(resource.remoteUrl);
    try {
      const cdp = await browser.newBrowserCDPSession();
      await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: folder, eventsEnabled: true });
      const page = await browser.contexts()[0]!.newPage();
      await page.goto(`${site.url}/reports`);
      await page.click('#link');
      await expect.poll(async () => (await listed(resourcePath)).length, { timeout: 20_000 }).toBe(before + 1);
      // A context of the client's own, with the folder named per page (the old Page method): the same.
      const context = await browser.newContext();
      const other = await context.newPage();
      const pageCdp = await context.newCDPSession(other);
      await pageCdp.send('Page.setDownloadBehavior', { behavior: 'allow', downloadPath: folder });
      await other.goto(`${site.url}/reports`);
      await other.click('#build');
      await expect.poll(async () => (await listed(resourcePath)).length, { timeout: 20_000 }).toBe(before + 2);
      const names = (await listed(resourcePath)).map((file) => file.name);
      expect(names).toContain(`link-${nameMark}.csv`);
      expect(names).toContain(`built-${nameMark}.csv`);
      expect(readdirSync(folder)).toEqual([]);
      expect(leftOnHost([os.homedir(), os.tmpdir(), path.dirname(stack.config.dataDir)])).toEqual([]);
      // Denying is the client's to choose.
      await cdp.send('Browser.setDownloadBehavior', { behavior: 'deny' });
      await page.click('#link');
      await sleep(2000);
      expect((await listed(resourcePath)).length).toBe(before + 2);
    } finally {
      await browser.close().catch(() => {});
      rmSync(folder, { recursive: true, force: true });
      await stack.http.post(`${resourcePath}/stop`, undefined, as());
    }
    // Kept after the browser stopped.
    await expect.poll(async () => (await stack.http.get(resourcePath, as())).body.status, { timeout: 30_000 }).toBe('stopped');
    expect((await listed(resourcePath)).length).toBe(before + 2);
  });

  it('cancels a download past DOWNLOAD_MAX_BYTES, says so in the browser’s log, and fails the node', async () => {
    const pipelineId = await createPipeline(stack, user.slug, as(), {
      nodes: {
        page: { type: 'browser.page' },
        open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/reports` } },
        big: { type: 'page.download', timeoutMs: 30_000, inputs: { page: { $ref: 'open.page' }, url: `${site.url}/big.bin` } },
      },
    });
    const { runUrl } = await startRun(stack, user.slug, as(), pipelineId, user.sessionId);
    const run = await settledRun(stack, runUrl, as(), 120_000);
    expect(run.status.pipeline).toBe('failed');
    expect(run.error).toMatchObject({ node: 'big', code: 'download_failed' });
    expect(run.error.message).toMatch(
      new RegExp(`big-${nameMark}\\.bin was cancelled: .*${MAX_BYTES} bytes of downloads \\(DOWNLOAD_MAX_BYTES\\)`),
    );
    const resourcePath = `/${user.slug}/api/sessions/${user.sessionId}/${run.resources[0].id}`;
    expect((await listed(resourcePath)).map((file) => file.name)).not.toContain(`big-${nameMark}.bin`);
    const lines = (await stack.http.get(`${resourcePath}/logs?limit=200`, as())).body as { message: string; severity: string }[];
    expect(lines.some((line) => line.severity === 'warn' && /was cancelled: .*DOWNLOAD_MAX_BYTES/.test(line.message))).toBe(true);
    expect(leftOnHost([os.homedir(), os.tmpdir(), path.dirname(stack.config.dataDir)])).toEqual([]);
  });
});
