import { gunzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordingBlobs } from '../../../server/browsers/recordings/recordingFiles.ts';
import { createApiKey } from '../../support/accounts.ts';
import { startTestSite } from '../../support/pages.ts';
import { createPipeline, settledRun, userWithSession } from '../../support/pipelines.ts';
import { stopAndWait } from '../../support/resources.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';

/**
 * Recordings on the real stack (docs/browsers.md, Recordings): a run started with `record` types a
 * secret argument and a password into a page that looks for the recorder and prints what is typed;
 * a session with `record` records a page its user opens over CDP. What is stored holds the pages,
 * and neither the password nor the secret; the page finds no trace of the recorder.
 */

const SECRET = 'Recorded-S3cret-arg-2718';
const PASSWORD = 'Typed-passw0rd-3141';

/**
 * Looks for a recorder as a page's script can: globals, replaced or wrapped functions and
 * prototypes, calls to the page world's `addEventListener` and `MutationObserver` it did not make,
 * extra elements, attributes and requests. Writes what it found into #verdict (JSON), at load, on
 * every input and a second later.
 */
const DETECTOR = `(() => {
  const toString = Function.prototype.toString;
  const stringify = JSON.stringify;
  const watched = [
    [window, 'MutationObserver'], [window, 'IntersectionObserver'], [window, 'ResizeObserver'], [window, 'fetch'],
    [window, 'requestAnimationFrame'], [window, 'setTimeout'],
    [EventTarget.prototype, 'addEventListener'], [EventTarget.prototype, 'removeEventListener'],
    [Node.prototype, 'appendChild'], [Node.prototype, 'insertBefore'], [Node.prototype, 'removeChild'],
    [Element.prototype, 'attachShadow'], [Element.prototype, 'setAttribute'],
    [CSSStyleSheet.prototype, 'insertRule'], [CSSStyleSheet.prototype, 'deleteRule'],
    [History.prototype, 'pushState'], [History.prototype, 'replaceState'],
    [XMLHttpRequest.prototype, 'open'], [CanvasRenderingContext2D.prototype, 'fillRect'],
  ];
  const accessors = [[HTMLInputElement.prototype, 'value'], [HTMLInputElement.prototype, 'checked'], [HTMLTextAreaElement.prototype, 'value'], [HTMLSelectElement.prototype, 'value']];
  const saved = watched.map(([owner, name]) => owner[name]);
  const savedAccessors = accessors.map(([owner, name]) => Object.getOwnPropertyDescriptor(owner, name));
  const globalsBefore = new Set(Object.getOwnPropertyNames(window));
  // Spies: the page itself calls neither after this point except through the saved originals.
  const add = EventTarget.prototype.addEventListener;
  const Observer = window.MutationObserver;
  let foreignCalls = 0;
  EventTarget.prototype.addEventListener = function (...args) { foreignCalls++; return add.apply(this, args); };
  window.MutationObserver = class extends Observer { constructor(...args) { foreignCalls++; super(...args); } };
  const spies = [EventTarget.prototype.addEventListener, window.MutationObserver];
  const check = () => {
    const found = [];
    for (const name of Object.getOwnPropertyNames(window)) {
      if (/rrweb|^__rr|^__browserflow|browserflow/i.test(name)) found.push('global ' + name);
      else if (!globalsBefore.has(name) && !['__detector', '__verdictCount'].includes(name)) found.push('new global ' + name);
    }
    watched.forEach(([owner, name], i) => {
      const now = owner[name];
      const expected = i === 0 ? spies[1] : i === 6 ? spies[0] : saved[i];
      if (now !== expected) found.push('replaced ' + name);
      if (i !== 0 && i !== 6 && typeof now === 'function' && !toString.call(now).includes('[native code]')) found.push('not native ' + name);
    });
    accessors.forEach(([owner, name], i) => {
      const now = Object.getOwnPropertyDescriptor(owner, name);
      if (now.get !== savedAccessors[i].get || now.set !== savedAccessors[i].set) found.push('accessor ' + name);
    });
    if (foreignCalls > 0) found.push(foreignCalls + ' calls the page did not make');
    for (const element of document.querySelectorAll('*')) {
      for (const attribute of element.getAttributeNames()) if (/^(rr|data-rr|__rr)/i.test(attribute)) found.push('attribute ' + attribute);
    }
    const elements = document.querySelectorAll('iframe, style, link, script, object, embed, canvas, template').length;
    if (elements !== 1) found.push(elements + ' iframes, styles or scripts');
    if (document.documentElement.shadowRoot || document.body.shadowRoot) found.push('a shadow root');
    // Chromium's own favicon request shows there, recorded or not.
    for (const entry of performance.getEntriesByType('resource')) if (!entry.name.endsWith('/favicon.ico')) found.push('request ' + entry.name);
    document.getElementById('verdict').textContent = stringify(found);
    window.__verdictCount = (window.__verdictCount || 0) + 1;
  };
  window.__detector = check;
  add.call(document, 'DOMContentLoaded', () => {
    const name = document.getElementById('name');
    add.call(name, 'input', () => {
      document.getElementById('echo').textContent = 'Hello ' + name.value;
      check();
    });
    check();
    setTimeout(check, 1000);
  });
})();`;

const PAGE = `<!doctype html><html><head><title>Recorded page</title><script>${DETECTOR}</script></head>
<body><h1>Recorded heading</h1>
<label>Name <input id="name" type="text"></label>
<label>Password <input id="pass" type="password"></label>
<p id="echo"></p><pre id="verdict">not checked</pre></body></html>`;

type Page = { page: number; url: string; events: number };

describe('recordings', () => {
  let stack: TestStack;
  let site: Awaited<ReturnType<typeof startTestSite>>;

  beforeAll(async () => {
    stack = await startTestStack({}, { browserHost: true });
    site = await startTestSite({
      '/recorded': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(PAGE);
      },
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await site?.close();
  });

  /** Every stored part of a browser's recording, opened and decompressed, as one text. */
  async function storedText(resourceId: string) {
    const blobs = recordingBlobs(stack.orm, stack.serviceSecret);
    const rows = await stack.orm.em
      .fork()
      .getConnection()
      .execute<{ key: string }[]>(`select key from blobs where key like ?`, [`recordings/${resourceId}/%`]);
    expect(rows.length).toBeGreaterThan(1);
    const texts = [];
    for (const { key } of rows) {
      const bytes = (await blobs.get(key)) as Buffer;
      texts.push(key.endsWith('/manifest') ? bytes.toString('utf8') : gunzipSync(bytes).toString('utf8'));
    }
    return texts.join('\n');
  }

  it('a run started with record stores its pages with the password and the secret masked, and the page detects nothing', async () => {
    const { token, slug, sessionId } = await userWithSession(stack, 'recorded');
    const pipelineId = await createPipeline(
      stack,
      slug,
      { token },
      {
        parameters: { secret: { refType: 'string', secret: true } },
        nodes: {
          page: { type: 'browser.page' },
          open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/recorded` } },
          name: { type: 'page.fill', inputs: { page: { $ref: 'open.page' }, selector: '#name', value: { $param: 'secret' } } },
          pass: { type: 'page.fill', inputs: { page: { $ref: 'name.page' }, selector: '#pass', value: PASSWORD } },
          wait: { type: 'page.wait', inputs: { page: { $ref: 'pass.page' }, ms: 1500 } },
          verdict: { type: 'extract.text', inputs: { page: { $ref: 'wait.page' }, selector: '#verdict' } },
        },
        outputs: { verdict: { $ref: 'verdict.text' } },
      },
    );
    const started = await stack.http.post(
      `/${slug}/api/pipelines/${pipelineId}/start`,
      { session: sessionId, args: { secret: SECRET }, record: true },
      { token },
    );
    expect(started.status, started.text).toBe(200);
    const run = await settledRun(stack, `/${slug}/api/pipelines/${pipelineId}/${started.body.id}`, { token });
    expect(run.status.pipeline, JSON.stringify(run.error)).toBe('succeeded');
    // The page's own checks found nothing of the recorder, at load, on each input and later.
    expect(JSON.parse(run.result.verdict)).toEqual([]);
    expect(run.record).toBe(true);
    expect(run.recording).toMatch(new RegExp(`/${slug}/api/sessions/${sessionId}/[0-9a-f-]+/recordings$`));

    // The run started the browser and stopped it at its end: its recording is complete.
    const resourceId = run.recording.split('/').at(-2) as string;
    const recordedUrls = async () => ((await stack.http.get(run.recording, { token })).body.pages as Page[]).map((entry) => entry.url);
    await expect.poll(recordedUrls, { timeout: 30_000 }).toContain(`${site.url}/recorded`);
    const listed = await stack.http.get(run.recording, { token });
    expect(listed.status, listed.text).toBe(200);
    const page = (listed.body.pages as Page[]).find((entry) => entry.url === `${site.url}/recorded`);
    expect(page, listed.text).toBeDefined();
    const events = await stack.http.get(`${run.recording}/${page?.page}`, { token });
    expect(events.status, events.text).toBe(200);
    const served = JSON.stringify(events.body.events);
    expect(served).toContain('Recorded heading');
    expect((events.body.events as { type: number }[]).some((event) => event.type === 2)).toBe(true);

    const stored = await storedText(resourceId);
    expect(stored).toContain('Recorded heading');
    for (const text of [served, stored]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(PASSWORD);
    }
    // The page printed the secret it was typed: the text of it is kept, masked.
    expect(stored).toContain('Hello ');
  }, 240_000);

  it('a session with record records a page its user opens over CDP, for readers with cookies.read where it has cookies', async () => {
    const { token, slug, sessionId } = await userWithSession(stack, 'recorded-session');
    const cookies = [{ name: 'sid', value: 'a-cookie-value', url: site.url }];
    const patched = await stack.http.patch(`/${slug}/api/sessions/${sessionId}`, { record: true, cookies }, { token });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.record).toBe(true);
    const started = await stack.http.post(`/${slug}/api/sessions/${sessionId}/start`, undefined, { token });
    expect(started.status, started.text).toBe(200);
    const resource = `/${slug}/api/sessions/${sessionId}/${started.body.id}`;
    const browser = await chromium.connectOverCDP(started.body.remoteUrl);
    try {
      const page = await browser.contexts()[0]!.newPage();
      await page.goto(`${site.url}/recorded`);
      await page.fill('#pass', PASSWORD);
      await page.waitForTimeout(1500);
      expect(JSON.parse((await page.textContent('#verdict')) as string)).toEqual([]);
    } finally {
      await browser.close();
    }
    await stopAndWait(stack.http, resource, { token });
    const listed = await stack.http.get(`${resource}/recordings`, { token });
    expect(listed.status, listed.text).toBe(200);
    const recorded = (listed.body.pages as Page[]).find((entry) => entry.url === `${site.url}/recorded`);
    expect(recorded, listed.text).toBeDefined();
    const events = await stack.http.get(`${resource}/recordings/${recorded?.page}`, { token });
    expect(JSON.stringify(events.body.events)).toContain('Recorded heading');
    expect(JSON.stringify(events.body.events)).not.toContain(PASSWORD);
    expect((await storedText(started.body.id)).includes(PASSWORD)).toBe(false);

    const project = slug;
    const reader = await createApiKey(stack, token, { accessType: 'custom', permissions: [`${project}.sessions.read`] });
    const cookieReader = await createApiKey(stack, token, {
      accessType: 'custom',
      permissions: [`${project}.sessions.read`, `${project}.cookies.read.${sessionId}`],
    });
    expect((await stack.http.get(`${resource}/recordings`, { apiKey: reader.secret })).status).toBe(403);
    expect((await stack.http.get(`${resource}/recordings/${recorded?.page}`, { apiKey: reader.secret })).status).toBe(403);
    expect((await stack.http.get(`${resource}/recordings`, { apiKey: cookieReader.secret })).status).toBe(200);
    expect((await stack.http.get(`${resource}/recordings/99`, { token })).status).toBe(404);
  }, 240_000);
});
