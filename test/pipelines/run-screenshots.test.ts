import pino from 'pino';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHousekeepingActivities } from '../../activities/housekeeping.ts';
import { createBrowserflowClient } from '../../client/index.ts';
import { capturePage } from '../../server/browsers/host/nodes/runScreenshots.ts';
import { createApiKey, registerUser } from '../support/accounts.ts';
import { launchChromium } from '../support/chromium.ts';
import { startTestSite } from '../support/pages.ts';
import { createPipeline, settledRun, userWithSession } from '../support/pipelines.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * A run's `screenshots`: pictures after each browser node (`steps`), where a node failed (the
 * default, `failures`) or none; kept under a bound per run and for a retention; served as JPEG to
 * who may read the run; secrets typed into fields drawn as a password field draws them.
 */

const SECRET = 'S3cret-value-xyz';
const FORM = `<!doctype html><title>Sign in</title><h1>Sign in</h1>
<label>User <input id="user" type="text"></label><p id="note">hello</p>`;

let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
let token: string;
let slug: string;
let sessionId: string;

beforeAll(async () => {
  stack = await startTestStack({}, { browserHost: true });
  site = await startTestSite({
    '/form': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(FORM);
    },
  });
  ({ token, slug, sessionId } = await userWithSession(stack, 'pictures'));
}, 120_000);
afterAll(async () => {
  await stack?.close();
  await site?.close();
});

/** Opens the form, types the secret parameter into it, reads the heading (or `selector`). */
const formSource = (selector = 'h1') => ({
  parameters: { pw: { refType: 'string', secret: true } },
  nodes: {
    page: { type: 'browser.page' },
    open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/form` } },
    type: { type: 'page.fill', inputs: { page: { $ref: 'open.page' }, selector: '#user', value: { $param: 'pw' } } },
    heading: { type: 'extract.text', timeoutMs: 1500, inputs: { page: { $ref: 'type.page' }, selector } },
  },
  outputs: { heading: { $ref: 'heading.text' } },
});

async function runToEnd(pipelineId: string, body: Record<string, unknown>) {
  const started = await stack.http.post(
    `/${slug}/api/pipelines/${pipelineId}/start`,
    { session: sessionId, args: { pw: SECRET }, ...body },
    { token },
  );
  expect(started.status, started.text).toBe(200);
  return settledRun(stack, `/${slug}/api/pipelines/${pipelineId}/${started.body.id}`, { token });
}

const isJpeg = (bytes: Buffer) => bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;

describe('run screenshots', () => {
  it('steps: a picture after each browser node, linked from the run and its log, served as JPEG to its readers only', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, formSource());
    const run = await runToEnd(pipelineId, { screenshots: 'steps' });
    expect(run.status.pipeline).toBe('succeeded');
    expect(run.screenshotMode).toBe('steps');
    expect(run.screenshots.map((shot: { node: string; kind: string }) => [shot.node, shot.kind])).toEqual([
      ['page', 'step'],
      ['open', 'step'],
      ['type', 'step'],
      ['heading', 'step'],
    ]);
    const typed = run.screenshots[2];
    expect(typed.pageUrl).toBe(`${site.url}/form`);
    expect(typed.url).toBe(`${stack.config.publicUrl}/${slug}/api/screenshots/${typed.id}`);
    expect(typed.width).toBeGreaterThan(0);
    expect(typed.bytes).toBeGreaterThan(1000);

    const path = new URL(typed.url).pathname;
    const image = await fetch(`${stack.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/jpeg');
    const bytes = Buffer.from(await image.arrayBuffer());
    expect(isJpeg(bytes)).toBe(true);
    expect(bytes.length).toBe(typed.bytes);
    // The SDK reads the same bytes with its credentials.
    const viaSdk = await createBrowserflowClient({ url: stack.url, token }).screenshot(typed);
    expect(Buffer.from(viaSdk).equals(bytes)).toBe(true);

    // Another user, and nobody at all, find no such picture.
    const other = (await registerUser(stack)).token;
    expect((await fetch(`${stack.url}${path}`, { headers: { authorization: `Bearer ${other}` } })).status).toBe(404);
    expect((await fetch(`${stack.url}${path}`)).status).toBe(404);
    expect((await stack.http.get(`/${slug}/api/screenshots/not-an-id`, { token })).status).toBe(404);

    // Each picture has its log line, after the node's own.
    const logs = await stack.http.get(`/${slug}/api/pipelines/${pipelineId}/${run.id}/logs?limit=200`, { token });
    const linked = logs.body.filter((entry: { area: string }) => entry.area === 'screenshot');
    expect(linked.map((entry: { object: { screenshot: string } }) => entry.object.screenshot)).toEqual(
      run.screenshots.map((shot: { id: string }) => shot.id),
    );
    expect(JSON.stringify(logs.body)).not.toContain(SECRET);
  }, 120_000);

  it('by default only where a node failed, and none with screenshots: none', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, formSource('#missing'));
    const failed = await runToEnd(pipelineId, {});
    expect(failed.status.pipeline).toBe('failed');
    expect(failed.screenshotMode).toBe('failures');
    expect(failed.screenshots.map((shot: { node: string; kind: string }) => [shot.node, shot.kind])).toEqual([['heading', 'failure']]);
    expect(failed.screenshots[0].pageUrl).toBe(`${site.url}/form`);

    const none = await runToEnd(pipelineId, { screenshots: 'none' });
    expect(none.status.pipeline).toBe('failed');
    expect(none.screenshots).toEqual([]);

    const ok = await runToEnd(await createPipeline(stack, slug, { token }, formSource()), {});
    expect(ok.status.pipeline).toBe('succeeded');
    expect(ok.screenshots).toEqual([]);

    const wrong = await stack.http.post(
      `/${slug}/api/pipelines/${pipelineId}/start`,
      { session: sessionId, screenshots: 'all' },
      { token },
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.issues?.[0]?.path).toContain('screenshots');
  }, 120_000);

  it("a function run's picture is served to who may read the function, not to a key that may only execute it", async () => {
    const fnSlug = `failing-${Date.now().toString(36)}`;
    const created = await stack.http.put(
      `/${slug}/api/functions`,
      {
        name: fnSlug,
        description: '',
        slug: fnSlug,
        definition: {
          source: formSource('#missing'),
          parameters: [{ name: 'pw', refType: 'string' }],
          outputs: [{ name: 'heading', refType: 'string' }],
        },
      },
      { token },
    );
    expect(created.status, created.text).toBe(200);
    const fnId = created.body.id as string;
    const failed = await stack.http.post(`/${slug}/api/functions/slug/${fnSlug}/execute`, { args: { pw: SECRET } }, { token });
    expect(failed.status, failed.text).not.toBe(200);
    const [row] = (await stack.orm.em
      .fork()
      .getConnection()
      .execute(
        'select r.id, r.project_id from pipeline_runs r join function_versions v on v.id = r.function_version_id where v.function_id = ?',
        [fnId],
      )) as { id: string; project_id: string }[];
    if (!row) throw new Error('the execute made no run');
    const run = await stack.http.get(`/${slug}/api/functions/${fnId}/runs/${row.id}`, { token });
    expect(run.status, run.text).toBe(200);
    const [shot] = run.body.screenshots as { url: string; kind: string }[];
    expect(shot?.kind).toBe('failure');
    const path = new URL(shot?.url as string).pathname;

    const owner = (grants: string[]) => createApiKey(stack, token, { accessType: 'custom', permissions: grants });
    const executeOnly = await owner([`${row.project_id}.functions.execute.${fnId}`]);
    expect((await fetch(`${stack.url}${path}`, { headers: { 'x-api-key': executeOnly.secret } })).status).toBe(404);
    const reader = await owner([`${row.project_id}.functions.read.${fnId}`, `${row.project_id}.functions.execute.${fnId}`]);
    expect((await fetch(`${stack.url}${path}`, { headers: { 'x-api-key': reader.secret } })).status).toBe(200);
  });

  it('housekeeping deletes pictures older than their retention', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, formSource('#missing'));
    const run = await runToEnd(pipelineId, {});
    const [kept] = run.screenshots;
    const connection = stack.orm.em.getConnection();
    await connection.execute(`update run_screenshots set created = now() - interval '15 days' where id = ?`, [kept.id]);
    const housekeeping = createHousekeepingActivities({ orm: stack.orm, config: stack.config, log: pino({ level: 'silent' }) } as never);
    const deleted = await housekeeping.deleteExpiredRows();
    expect(deleted.run_screenshots).toBeGreaterThanOrEqual(1);
    const after = await stack.http.get(`/${slug}/api/pipelines/${pipelineId}/${run.id}`, { token });
    expect(after.body.screenshots).toEqual([]);
  }, 120_000);
});

describe('run screenshots under their bound', () => {
  let small: TestStack;
  afterAll(async () => small?.close());

  it('a run keeps no more than RUN_SCREENSHOTS_MAX_BYTES, and its log says why a picture is missing', async () => {
    small = await startTestStack({ RUN_SCREENSHOTS_MAX_BYTES: '1000' }, { browserHost: true });
    const { token: user, slug: project, sessionId: session } = await userWithSession(small, 'bound');
    const pipelineId = await createPipeline(small, project, { token: user }, formSource());
    const started = await small.http.post(
      `/${project}/api/pipelines/${pipelineId}/start`,
      { session, args: { pw: SECRET }, screenshots: 'steps' },
      { token: user },
    );
    const run = await settledRun(small, `/${project}/api/pipelines/${pipelineId}/${started.body.id}`, { token: user });
    expect(run.status.pipeline).toBe('succeeded');
    expect(run.screenshots).toEqual([]);
    const logs = await small.http.get(`/${project}/api/pipelines/${pipelineId}/${run.id}/logs?limit=200`, { token: user });
    const missing = logs.body.filter((entry: { area: string }) => entry.area === 'screenshot');
    expect(missing).toHaveLength(4);
    expect(missing[0].message).toContain('reached their bound of 1000 bytes');
  }, 180_000);
});

describe('secrets in screenshots', () => {
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 480, height: 200 } });
  });
  afterAll(async () => browser?.close());

  const shotOf = async (html: string, value: string, secrets: string[]) => {
    await page.setContent(`<style>body{font:16px monospace}</style>${html}`);
    await page.fill('#f', value);
    await page.locator('#f').blur();
    return (await capturePage(page, secrets)).image;
  };

  /** Whether an element still carries one of the marks (`data-bf-…`) a picture covers. */
  const marksLeft = () =>
    page.evaluate(() =>
      Array.from(document.querySelectorAll('*')).some((element) => element.getAttributeNames().some((name) => name.startsWith('data-bf-'))),
    );

  it('a secret typed into a text field is drawn as a password field draws it, and other text is not', async () => {
    const asPassword = await shotOf('<input id="f" type="password">', SECRET, []);
    const masked = await shotOf('<input id="f" type="text">', SECRET, [SECRET]);
    const plain = await shotOf('<input id="f" type="text">', SECRET, []);
    expect(masked.equals(asPassword)).toBe(true);
    expect(plain.equals(asPassword)).toBe(false);
    // The marks are gone from the page after the picture.
    expect(await marksLeft()).toBe(false);
    // The PNG an analysis model's screenshot tool gets hides it alike.
    const asPasswordPng = (await capturePage(page, [SECRET], 'png')).image;
    expect(asPasswordPng.subarray(1, 4).toString()).toBe('PNG');
    await page.setContent('<style>body{font:16px monospace}</style><input id="f" type="password">');
    await page.fill('#f', SECRET);
    await page.locator('#f').blur();
    expect((await capturePage(page, [], 'png')).image.equals(asPasswordPng)).toBe(true);
  }, 60_000);

  /** How many pixels of two JPEGs differ clearly (by more than 48 in a channel), compared in a canvas. */
  const pixelsApart = async (a: Buffer, b: Buffer) => {
    const canvas = await browser.newPage();
    try {
      return await canvas.evaluate(
        async ({ first, second }) => {
          const pixels = async (base64: string) => {
            const image = await createImageBitmap(await (await fetch(`data:image/jpeg;base64,${base64}`)).blob());
            const context = new OffscreenCanvas(image.width, image.height).getContext('2d') as OffscreenCanvasRenderingContext2D;
            context.drawImage(image, 0, 0);
            return context.getImageData(0, 0, image.width, image.height).data;
          };
          const [x, y] = [await pixels(first), await pixels(second)];
          let apart = 0;
          for (let i = 0; i < x.length; i += 4) {
            if ([0, 1, 2].some((channel) => Math.abs((x[i + channel] ?? 0) - (y[i + channel] ?? 0)) > 48)) apart++;
          }
          return apart;
        },
        { first: a.toString('base64'), second: b.toString('base64') },
      );
    } finally {
      await canvas.close();
    }
  };

  it('text that holds a secret is covered: two different secrets of one length give the same picture', async () => {
    const html = (text: string) => `<input id="f" type="text"><p>token: <b>${text}</b></p>`;
    const first = await shotOf(html('AAAA-1111-ZZZZ'), '', ['AAAA-1111-ZZZZ']);
    const second = await shotOf(html('BBBB-2222-YYYY'), '', ['BBBB-2222-YYYY']);
    const unmasked = await shotOf(html('AAAA-1111-ZZZZ'), '', []);
    // The box's edges may fall between pixels: a few of them, not the text.
    expect(await pixelsApart(first, second)).toBeLessThan(10);
    expect(await pixelsApart(first, unmasked)).toBeGreaterThan(100);
    expect(await marksLeft()).toBe(false);
  }, 60_000);
});
