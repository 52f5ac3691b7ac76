import type http from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPageModel } from '../../../server/agents/page/readPageModel.ts';
import { capturePage } from '../../../server/browsers/host/nodes/runScreenshots.ts';
import { evaluateMatches } from '../../../server/browsers/page/isolatedWorld.ts';
import { launchChromium } from '../../support/chromium.ts';
import { startTestSite } from '../../support/pages.ts';
import { createPipeline, settledRun, userWithSession } from '../../support/pipelines.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';

/**
 * What a hostile page sees of a run: it replaces the prototypes and `JSON` the host's reads could
 * use and records every string they are handed (beaconed to the test's site as it goes, and kept
 * in `window.__seen`). The host reads the page in an isolated world of its own and hands the page
 * no secret, so nothing of a run's secret arguments or the session's cookies reaches the record.
 */

const SECRET = 'Hostile-S3cret-arg-4411';
const COOKIE = 'Hostile-c00kie-value-7788';
const PROBE = 'hostile-page-probe';

/** Records every string (and array or plain object, as JSON) any hooked function is handed or called on. */
const HOOKS = `(() => {
  'use strict';
  const stringify = JSON.stringify;
  const beacon = navigator.sendBeacon.bind(navigator);
  const later = setTimeout;
  const objectProto = Object.prototype;
  const protoOf = Object.getPrototypeOf;
  const isArray = Array.isArray;
  let pending = [];
  let busy = false;
  let queued = false;
  window.__seen = '';
  const note = (value) => {
    let text = null;
    if (typeof value === 'string') text = value;
    else if (value && typeof value === 'object' && (isArray(value) || protoOf(value) === objectProto)) {
      try { text = stringify(value); } catch {}
    }
    if (text) { pending[pending.length] = text; window.__seen += text + '\\n'; }
  };
  const flush = () => {
    busy = true;
    try { if (pending.length) beacon('/seen', stringify(pending)); pending = []; } finally { busy = false; queued = false; }
  };
  const hook = (owner, name) => {
    const original = owner && owner[name];
    if (typeof original !== 'function') return;
    owner[name] = function (...args) {
      if (!busy) {
        busy = true;
        try { note(this); for (let i = 0; i < args.length; i++) note(args[i]); } finally { busy = false; }
        if (!queued) { queued = true; later(flush, 0); }
      }
      return original.apply(this, args);
    };
  };
  for (const name of ['some', 'every', 'includes', 'indexOf', 'filter', 'map', 'forEach', 'find', 'join', 'push', 'slice', 'concat'])
    hook(Array.prototype, name);
  for (const name of ['includes', 'indexOf', 'startsWith', 'endsWith', 'match', 'replace', 'split', 'trim', 'slice', 'toLowerCase'])
    hook(String.prototype, name);
  for (const name of ['stringify', 'parse']) hook(JSON, name);
  for (const name of ['keys', 'values', 'entries', 'assign', 'freeze', 'fromEntries']) hook(Object, name);
  for (const name of ['querySelectorAll', 'querySelector', 'createTreeWalker', 'getElementById']) hook(Document.prototype, name);
  for (const name of ['querySelectorAll', 'querySelector', 'getAttribute', 'setAttribute', 'removeAttribute', 'matches', 'closest'])
    hook(Element.prototype, name);
  hook(TreeWalker.prototype, 'nextNode');
  hook(window, 'postMessage');
  // While window.__sabotage is set, a page query fails: only a read out of the page's world still works.
  for (const owner of [Document.prototype, Element.prototype]) {
    const query = owner.querySelectorAll;
    owner.querySelectorAll = function (...args) {
      if (window.__sabotage) throw new Error('sabotaged');
      return query.apply(this, args);
    };
  }
  JSON.stringify({ probe: '${PROBE}' });
})();`;

const HOSTILE = `<!doctype html><title>Welcome</title><script>${HOOKS}</script>
<style>body{font:16px monospace}</style><h1>Welcome</h1>
<label>User <input id="user" type="text"></label><ul><li>one</li><li>two</li></ul>`;

describe('a hostile page', () => {
  let stack: TestStack;
  let site: Awaited<ReturnType<typeof startTestSite>>;
  const seen: string[] = [];

  beforeAll(async () => {
    stack = await startTestStack({}, { browserHost: true });
    site = await startTestSite({
      '/hostile': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(HOSTILE);
      },
      '/seen': (req: http.IncomingMessage, res) => {
        let body = '';
        req.on('data', (chunk) => {
          body += chunk;
        });
        req.on('end', () => {
          seen.push(body);
          res.end();
        });
      },
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await site?.close();
  });

  it("records nothing of a run's secret arguments or the session's cookies, with pictures of every step and of a failed wait", async () => {
    const { token, slug, sessionId } = await userWithSession(stack, 'hostile');
    const cookies = [{ name: 'sid', value: COOKIE, url: site.url, httpOnly: true }];
    const patched = await stack.http.patch(`/${slug}/api/sessions/${sessionId}`, { cookies }, { token });
    expect(patched.status, patched.text).toBe(200);
    const pipelineId = await createPipeline(
      stack,
      slug,
      { token },
      {
        parameters: { pw: { refType: 'string', secret: true } },
        nodes: {
          page: { type: 'browser.page' },
          open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/hostile` } },
          type: { type: 'page.fill', inputs: { page: { $ref: 'open.page' }, selector: '#user', value: { $param: 'pw' } } },
          heading: { type: 'extract.text', inputs: { page: { $ref: 'type.page' }, selector: 'h1' } },
          items: { type: 'extract.list', inputs: { page: { $ref: 'heading.page' }, selector: 'li', fields: { name: '.' } } },
          scroll: { type: 'page.scroll', inputs: { page: { $ref: 'items.page' }, to: 'bottom' } },
          never: { type: 'page.wait', timeoutMs: 1500, inputs: { page: { $ref: 'scroll.page' }, selector: '#never' } },
        },
        outputs: { heading: { $ref: 'heading.text' }, items: { $ref: 'items.records' } },
      },
    );
    const started = await stack.http.post(
      `/${slug}/api/pipelines/${pipelineId}/start`,
      { session: sessionId, args: { pw: SECRET }, screenshots: 'steps' },
      { token },
    );
    expect(started.status, started.text).toBe(200);
    const run = await settledRun(stack, `/${slug}/api/pipelines/${pipelineId}/${started.body.id}`, { token });
    expect(run.status.pipeline).toBe('failed');
    const shots = run.screenshots.map((shot: { node: string; kind: string }) => `${shot.node}:${shot.kind}`);
    expect(shots).toEqual(expect.arrayContaining(['type:step', 'heading:step', 'items:step', 'scroll:step', 'never:failure']));
    // The host's reads still read the page as it is, whatever its prototypes do.
    const nodes = await stack.http.get(`/${slug}/api/pipelines/${pipelineId}/${run.id}`, { token });
    expect(JSON.stringify(nodes.body)).toContain('Welcome');

    // The record reached the test (the page's own probe), and holds nothing of the run.
    await expect.poll(() => seen.join('\n'), { timeout: 10_000 }).toContain(PROBE);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const record = seen.join('\n');
    expect(record).not.toContain(SECRET);
    expect(record).not.toContain(COOKIE);
  }, 180_000);
});

describe("the host's reads of a hostile page: the analysis model's screenshot, the page model, extraction", () => {
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 480, height: 200 } });
  });
  afterAll(async () => browser?.close());

  const seenByPage = () => page.evaluate(() => (window as unknown as { __seen: string }).__seen);

  it('records nothing of the secrets a screenshot hides, and the picture still hides them', async () => {
    await page.setContent(HOSTILE);
    await page.fill('#user', SECRET);
    await page.locator('#user').blur();
    const masked = await capturePage(page, [SECRET, COOKIE], 'png');
    const seen = await seenByPage();
    expect(seen).toContain(PROBE);
    expect(seen).not.toContain(SECRET);
    expect(seen).not.toContain(COOKIE);
    await page.setContent(HOSTILE.replace('type="text"', 'type="password"'));
    await page.fill('#user', SECRET);
    await page.locator('#user').blur();
    const asPassword = await capturePage(page, [], 'png');
    expect(masked.image.equals(asPassword.image)).toBe(true);
  }, 60_000);

  it("reads the page model in the host's own world, out of reach of the page's functions", async () => {
    await page.setContent(HOSTILE);
    await page.evaluate('window.__sabotage = true');
    const model = await readPageModel(page);
    await page.evaluate('window.__sabotage = false');
    expect(model.headings.map((heading) => heading.text)).toEqual(['Welcome']);
  }, 60_000);

  it("reads what Playwright's selectors match, in open shadow roots and in a frame too, and leaves no mark", async () => {
    await page.setContent(`${HOSTILE}<div id="host"></div><iframe srcdoc="<p>in the frame</p>"></iframe>
      <script>document.getElementById('host').attachShadow({ mode: 'open' }).innerHTML = '<li>in the shadow</li>';</script>`);
    await page.frameLocator('iframe').locator('p').waitFor();
    const texts = (elements: Element[]) => elements.map((element) => element.textContent);
    expect(await evaluateMatches(page.locator('li'), texts)).toEqual(['one', 'two', 'in the shadow']);
    expect(await evaluateMatches(page.locator('text=two'), texts)).toEqual(['two']);
    expect(await evaluateMatches(page.frameLocator('iframe').locator('p'), texts)).toEqual(['in the frame']);
    const marked = await page.evaluate(() =>
      Array.from(document.querySelectorAll('*')).some((element) => element.getAttributeNames().some((name) => name.startsWith('data-bf-'))),
    );
    expect(marked).toBe(false);
  }, 60_000);
});
