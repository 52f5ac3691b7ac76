/// <reference lib="dom" />
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { SessionResource } from '../../db/entities/index.ts';
import { ResourceTokens } from '../../server/browsers/tokens/resourceTokens.ts';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import { launchChromium } from '../support/chromium.ts';
import { clickDownloadLink, startTestSite } from '../support/pages.ts';
import { cdpSocketOf, chromiumProcesses, connectionsTo } from '../support/sandbox.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * What a URL holder can reach through a running browser: the CDP proxy keeps it off the host's
 * files and privileged pages, Chromium does not see the service's environment, and the URLs a
 * caller gets (and how long they work) follow the caller's permissions.
 */

const CANARY = `canary-${Date.now()}-secret`;
let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
let owner: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };

beforeAll(async () => {
  // Anything in the service's environment would be inherited by a browser launched without `env`.
  process.env.BROWSERFLOW_TEST_CANARY = CANARY;
  stack = await startTestStack({}, { browserHost: true });
  site = await startTestSite({
    '/download': (_req, res) => {
      res.setHeader('content-type', 'application/octet-stream');
      res.setHeader('content-disposition', 'attachment; filename="payload.txt"');
      res.end('downloaded bytes');
    },
    '/form': (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(
        '<!doctype html><title>form</title><input id="name"><button id="send">send</button><p id="out"></p><script>send.onclick = () => { out.textContent = "Hello " + document.getElementById("name").value; };</script>',
      );
    },
    '/upload': (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<!doctype html><title>upload</title><input type="file" id="file">');
    },
  });
  owner = await registerUser(stack);
  project = await createProject(stack, owner.token);
});
afterAll(async () => {
  delete process.env.BROWSERFLOW_TEST_CANARY;
  await site?.close();
  await stack?.close();
});

async function startBrowser() {
  const created = await stack.http.put(`/${project.slug}/api/sessions`, { name: `s-${Date.now()}` }, { token: owner.token });
  expect(created.status, created.text).toBe(200);
  const sessionId = created.body.id as string;
  const started = await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/start`, undefined, { token: owner.token });
  expect(started.status, started.text).toBe(200);
  return { sessionId, resource: started.body as { id: string; remoteUrl: string; vncUrl: string; status: string } };
}

function stop(sessionId: string, resourceId: string) {
  return stack.http.post(`/${project.slug}/api/sessions/${sessionId}/${resourceId}/stop`, undefined, { token: owner.token });
}

/** Sends raw CDP messages over a WebSocket and collects the answers by id. */
async function rawCdp(url: string) {
  const socket = new WebSocket(url);
  const answers = new Map<number, { result?: unknown; error?: { code: number; message: string } }>();
  socket.on('message', (data) => {
    const message = JSON.parse(String(data));
    if (typeof message.id === 'number') answers.set(message.id, message);
  });
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  let nextId = 1;
  return {
    async send(method: string, params: Record<string, unknown> = {}, sessionId?: string) {
      const id = nextId++;
      return this.sendText(id, JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    },
    /** A message written by hand, with the id it carries. */
    async sendText(id: number, text: string) {
      socket.send(text);
      await expect.poll(() => answers.has(id), { timeout: 10_000 }).toBe(true);
      return answers.get(id) as { result?: any; error?: { code: number; message: string } };
    },
    close: () => socket.close(),
  };
}

/** Resolves with the close code when the server closes the socket (or the open fails). */
function closeCode(url: string, onOpen?: (socket: WebSocket) => void) {
  return new Promise<number>((resolve) => {
    const socket = new WebSocket(url);
    socket.on('open', () => onOpen?.(socket));
    socket.on('close', (code) => resolve(code));
    socket.on('error', () => {});
  });
}

/** The HTTP status a WebSocket upgrade is refused with (0: it was accepted). */
function upgradeRefusal(url: string) {
  return new Promise<number>((resolve) => {
    const socket = new WebSocket(url);
    socket.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      socket.terminate();
    });
    socket.on('open', () => {
      resolve(0);
      socket.close();
    });
    socket.on('error', () => {});
  });
}

describe('the CDP proxy', () => {
  it('keeps a remoteUrl holder off the host’s files and privileged pages, and normal browsing works', async () => {
    const { sessionId, resource } = await startBrowser();
    try {
      // Chromium's own environment holds nothing of the service's.
      const row = await stack.orm.em.fork().findOneOrFail(SessionResource, { id: resource.id });
      const environ = readFileSync(`/proc/${row.pid}/environ`, 'utf8');
      expect(environ).not.toContain(CANARY);
      const names = environ
        .split('\0')
        .filter(Boolean)
        .map((entry) => entry.split('=')[0] as string);
      const allowed = ['HOME', 'PATH', 'LANG', 'LANGUAGE', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR', 'FONTCONFIG_PATH', 'FONTCONFIG_FILE'];
      // Debian's launcher script (a shell) exports these before it execs Chromium.
      const launcher = ['PWD', 'CHROME_WRAPPER', 'CHROME_DESKTOP', 'CHROME_VERSION_EXTRA', 'CHROMIUM_FLAGS', 'GOOGLE_API_KEY'];
      const launcherPrefixes = ['GOOGLE_DEFAULT_CLIENT_'];
      const unexpected = names.filter(
        (name) => !allowed.includes(name) && !launcher.includes(name) && !launcherPrefixes.some((prefix) => name.startsWith(prefix)),
      );
      expect(unexpected).toEqual([]);

      const browser = await chromium.connectOverCDP(resource.remoteUrl);
      const context = browser.contexts()[0];
      if (!context) throw new Error('no default context');
      const page = await context.newPage();
      await page.goto(`${site.url}/plain`);
      expect(await page.textContent('#greeting')).toBe('Hello from the test site');

      // Navigations to the host's files and to privileged pages are refused, however spelled.
      for (const url of ['file:///proc/self/environ', 'view-source:file:///etc/passwd', 'chrome://version', 'about:version']) {
        await expect(page.goto(url), url).rejects.toThrow(/refused by the service/);
      }
      expect(page.url()).toBe(`${site.url}/plain`);
      const session = await context.newCDPSession(page);
      await expect(session.send('Page.navigate', { url: 'FI\tLE:///etc/passwd' })).rejects.toThrow(/refused by the service/);
      await expect(session.send('Target.exposeDevToolsProtocol', { targetId: 'x' } as never)).rejects.toThrow(/refused by the service/);
      // The page's own script cannot go there either (Chromium refuses renderer-initiated file:).
      await page.evaluate(() => {
        location.href = 'file:///etc/passwd';
      });
      await sleep(500);
      expect(page.url()).toBe(`${site.url}/plain`);

      // File inputs and drags take host paths: refused; contents sent by the client still work.
      await page.goto(`${site.url}/upload`);
      const { root } = await session.send('DOM.getDocument');
      const { nodeId } = await session.send('DOM.querySelector', { nodeId: root.nodeId, selector: '#file' });
      await expect(session.send('DOM.setFileInputFiles', { nodeId, files: ['/etc/passwd'] })).rejects.toThrow(/refused by the service/);
      // (Playwright's own setInputFiles reads a path on the client and sends the contents.)
      await page.setInputFiles('#file', { name: 'mine.txt', mimeType: 'text/plain', buffer: Buffer.from('from the client') });
      expect(await page.evaluate(() => (document.getElementById('file') as HTMLInputElement).files?.[0]?.name)).toBe('mine.txt');
      await expect(
        session.send('Input.dispatchDragEvent', {
          type: 'dragEnter',
          x: 5,
          y: 5,
          data: { items: [], files: ['/etc/passwd'], dragOperationsMask: 1 },
        }),
      ).rejects.toThrow(/refused by the service/);

      // Downloads do not land in a folder the client names.
      const folder = mkdtempSync(path.join(os.tmpdir(), 'bf-download-'));
      const browserSession = await browser.newBrowserCDPSession();
      await browserSession.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: folder });
      await clickDownloadLink(page, `${site.url}/download`, 'payload.txt');
      await sleep(1500);
      expect(readdirSync(folder)).toEqual([]);

      // A raw client gets the CDP error answer, with its id, and the connection goes on.
      const raw = await rawCdp(resource.remoteUrl);
      const refused = await raw.send('Target.createTarget', { url: 'file:///etc/passwd' });
      expect(refused.error?.code).toBe(-32000);
      expect(refused.error?.message).toMatch(/refused by the service/);
      const version = await raw.send('Browser.getVersion');
      expect(version.result?.product).toMatch(/Chrom/);
      const { targetInfos } = (await raw.send('Target.getTargets')).result;
      const pageTarget = targetInfos.find(
        (target: { type: string; url: string }) => target.type === 'page' && target.url.includes('/upload'),
      );
      const attached = await raw.send('Target.attachToTarget', { targetId: pageTarget.targetId, flatten: true });
      const navigated = await raw.send('Page.navigate', { url: 'file:///proc/self/environ' }, attached.result.sessionId);
      expect(navigated.error?.message).toMatch(/refused by the service/);
      // The old non-flat sessions carry commands inside a string: checked all the same.
      const nested = await raw.send('Target.sendMessageToTarget', {
        targetId: pageTarget.targetId,
        message: JSON.stringify({ id: 1, method: 'Page.navigate', params: { url: 'file:///etc/passwd' } }),
      });
      expect(nested.error?.message).toMatch(/refused by the service/);
      // Whichever of two duplicate keys Chromium's reader would take, it gets only the one checked.
      const duplicate = await raw.sendText(
        900,
        '{"id":900,"method":"Target.createTarget","params":{"url":"file:///etc/passwd"},"params":{"url":"about:blank"}}',
      );
      const { targetInfo } = (await raw.send('Target.getTargetInfo', { targetId: duplicate.result?.targetId })).result;
      expect(targetInfo.url).toBe('about:blank');
      raw.close();

      await page.goto(`${site.url}/again`);
      expect(await page.textContent('#greeting')).toBe('Hello from the test site');
      await browser.close();
    } finally {
      await stop(sessionId, resource.id);
    }
  });

  it('gives page script no DevTools port to reach: the browser speaks CDP over a pipe to its host', async () => {
    const { sessionId, resource } = await startBrowser();
    try {
      const row = await stack.orm.em.fork().findOneOrFail(SessionResource, { id: resource.id }, { fields: ['cdpEndpoint', 'pid'] });
      // Served at a Unix socket of the host, not a TCP port.
      cdpSocketOf(row.cdpEndpoint as string);
      const [browserProcess] = chromiumProcesses(row.pid as number);
      if (!browserProcess) throw new Error('no Chromium process found');
      const commandLine = readFileSync(`/proc/${browserProcess.pid}/cmdline`, 'utf8').split('\0');
      expect(commandLine).toContain('--remote-debugging-pipe');
      expect(commandLine.filter((arg) => arg.startsWith('--remote-debugging-port'))).toEqual([]);
      // Page script trying the usual DevTools port finds nothing.
      const browser = await chromium.connectOverCDP(resource.remoteUrl);
      const page = await browser.contexts()[0]!.newPage();
      await page.goto(`${site.url}/plain`);
      const outcome = await page.evaluate(
        () =>
          new Promise<string>((resolve) => {
            const socket = new window.WebSocket('ws://127.0.0.1:9222/devtools/browser');
            socket.onopen = () => resolve('open');
            socket.onerror = () => resolve('refused');
            setTimeout(() => resolve('timeout'), 5000);
          }),
      );
      expect(outcome).toBe('refused');
      await browser.close();
    } finally {
      await stop(sessionId, resource.id);
    }
  });
});

/** Files a download would leave under `folder` (finished, or in progress), searched all the way down. */
function downloadedFiles(folder: string) {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' }).filter((name) => /payload\.txt|\.crdownload$/.test(name));
}

/** The user-data-dir Chromium of `pid` runs with (its HOME, and so its default downloads folder, is inside). */
function userDataDirOf(pid: number) {
  const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  const flag = args.find((arg) => arg.startsWith('--user-data-dir='));
  if (!flag) throw new Error(`no --user-data-dir in the command line of ${pid}`);
  return flag.slice('--user-data-dir='.length);
}

describe('the CDP allow-list', () => {
  it('refuses unlisted methods and a context with its own proxy; downloads land in the browser’s folder, never the one a client names', async () => {
    const { sessionId, resource } = await startBrowser();
    try {
      const row = await stack.orm.em.fork().findOneOrFail(SessionResource, { id: resource.id }, { fields: ['pid'] });
      const profile = userDataDirOf(row.pid as number);
      const raw = await rawCdp(resource.remoteUrl);

      // A method the guard does not list gets JSON-RPC's "method not found", naming it.
      const unlisted = await raw.send('Browser.noSuchMethod');
      expect(unlisted.error).toEqual({
        code: -32601,
        message: expect.stringMatching(/^Browser\.noSuchMethod refused by the service: the service does not allow this method/),
      });
      // Refused ones say why.
      for (const [method, params] of [
        ['Tethering.bind', { port: 9333 }],
        ['SystemInfo.getInfo', {}],
        ['Target.setRemoteLocations', { locations: [{ host: '127.0.0.1', port: 5432 }] }],
        ['Browser.getBrowserCommandLine', {}],
      ] as const) {
        const refused = await raw.send(method, params);
        expect(refused.error?.code, method).toBe(-32000);
        expect(refused.error?.message, method).toMatch(new RegExp(`^${method.replace('.', '\\.')} refused by the service: `));
      }

      // A context of its own proxy (direct:// above all) would go around the service's.
      for (const params of [{ proxyServer: 'direct://' }, { proxyServer: 'http://127.0.0.1:1' }, { proxyBypassList: '<-loopback>' }]) {
        const refused = await raw.send('Target.createBrowserContext', params);
        expect(refused.error?.message).toMatch(/refused by the service: a context’s proxy is the session’s/);
      }
      // One without works, and its pages browse through the service's proxy.
      const context = await raw.send('Target.createBrowserContext', { disposeOnDetach: true });
      const browserContextId = context.result?.browserContextId as string;
      expect(browserContextId).toBeTruthy();
      const created = await raw.send('Target.createTarget', { url: `${site.url}/in-context`, browserContextId });
      const attached = await raw.send('Target.attachToTarget', { targetId: created.result?.targetId, flatten: true });
      const page = attached.result?.sessionId as string;
      await expect
        .poll(
          async () =>
            (await raw.send('Runtime.evaluate', { expression: 'document.title', returnByValue: true }, page)).result?.result?.value,
        )
        .toBe('Test page');

      // Downloads: a client allows or denies, never names the folder. Whatever it names (the
      // profile here), default included, the file lands in the browser's own folder and the
      // service keeps it (listed under the resource); nothing of it is in the folder it named.
      for (const behavior of ['default', 'allow', 'allowAndName']) {
        expect(
          (await raw.send('Browser.setDownloadBehavior', { behavior, downloadPath: profile, eventsEnabled: true })).error,
        ).toBeUndefined();
        expect(
          (await raw.send('Browser.setDownloadBehavior', { behavior, browserContextId, downloadPath: profile })).error,
        ).toBeUndefined();
        await raw.send('Page.navigate', { url: `${site.url}/download` }, page);
      }
      const browser = await chromium.connectOverCDP(resource.remoteUrl);
      const tab = await browser.contexts()[0]!.newPage();
      await tab.goto(`${site.url}/plain`);
      await (await browser.newBrowserCDPSession()).send('Browser.setDownloadBehavior', { behavior: 'default' });
      await clickDownloadLink(tab, `${site.url}/download`, 'payload.txt');
      const kept = async () =>
        (await stack.http.get(`/${project.slug}/api/sessions/${sessionId}/${resource.id}/downloads`, { token: owner.token })).body as {
          name: string;
        }[];
      await expect.poll(async () => (await kept()).length, { timeout: 20_000 }).toBe(4);
      expect(new Set((await kept()).map((file) => file.name))).toEqual(new Set(['payload.txt']));
      expect(downloadedFiles(profile)).toEqual([]);
      await browser.close();
      raw.close();
    } finally {
      await stop(sessionId, resource.id);
    }
  });

  it('keeps Playwright’s connectOverCDP working: pages, input, script, screenshots, PDFs, cookies, routes, new contexts, tracing', async () => {
    const { sessionId, resource } = await startBrowser();
    try {
      const browser = await chromium.connectOverCDP(resource.remoteUrl);
      const context = browser.contexts()[0]!;
      const page = await context.newPage();
      await page.goto(`${site.url}/form`);
      await page.fill('#name', 'Ada');
      await page.click('#send');
      expect(await page.textContent('#out')).toBe('Hello Ada');
      await page.keyboard.press('Tab');
      await page.mouse.click(5, 5);
      expect(await page.evaluate(() => navigator.userAgent)).toMatch(/Chrom/);
      expect(await page.locator('#name').inputValue()).toBe('Ada');
      expect((await page.screenshot()).subarray(1, 4).toString()).toBe('PNG');
      expect((await page.pdf()).subarray(0, 5).toString()).toBe('%PDF-');
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.setViewportSize({ width: 640, height: 480 });

      await context.addCookies([{ name: 'flavour', value: 'oat', url: site.url }]);
      expect((await context.cookies(site.url)).map((cookie) => cookie.name)).toContain('flavour');
      await context.clearCookies();
      expect(await context.cookies(site.url)).toEqual([]);

      await page.route('**/routed', (route) => route.fulfill({ contentType: 'text/html', body: '<title>routed</title>' }));
      await page.goto(`${site.url}/routed`);
      expect(await page.title()).toBe('routed');
      await page.unroute('**/routed');

      await context.grantPermissions(['geolocation'], { origin: site.url });
      await page.setExtraHTTPHeaders({ 'x-test': '1' });

      const isolated = await browser.newContext({ userAgent: 'Isolated/1.0', locale: 'de-DE', viewport: { width: 500, height: 400 } });
      const other = await isolated.newPage();
      await other.goto(`${site.url}/plain`);
      expect(await other.evaluate(() => navigator.userAgent)).toBe('Isolated/1.0');
      expect(await other.textContent('#greeting')).toBe('Hello from the test site');
      await isolated.close();

      // Chromium's own tracing streams back through IO.read.
      await browser.startTracing(page, { categories: ['devtools.timeline'] });
      await page.goto(`${site.url}/traced`);
      const trace = await browser.stopTracing();
      expect(JSON.parse(trace.toString()).traceEvents.length).toBeGreaterThan(0);
      // Playwright's own tracing (snapshots, screencast) too.
      await context.tracing.start({ screenshots: true, snapshots: true });
      await page.goto(`${site.url}/plain`);
      const tracePath = path.join(mkdtempSync(path.join(os.tmpdir(), 'bf-trace-')), 'trace.zip');
      await context.tracing.stop({ path: tracePath });
      expect(readFileSync(tracePath).subarray(0, 2).toString()).toBe('PK');

      const session = await context.newCDPSession(page);
      expect((await session.send('Accessibility.getFullAXTree')).nodes.length).toBeGreaterThan(0);
      await session.send('Performance.enable');
      expect((await session.send('Performance.getMetrics')).metrics.length).toBeGreaterThan(0);
      await browser.close();
    } finally {
      await stop(sessionId, resource.id);
    }
  });

  it('refuses a Playwright client that hands a process code to run: compilation caches, Skia pictures, dock images', async () => {
    const { sessionId, resource } = await startBrowser();
    try {
      const browser = await chromium.connectOverCDP(resource.remoteUrl);
      const page = await browser.contexts()[0]!.newPage();
      await page.goto(`${site.url}/plain`);
      const session = await page.context().newCDPSession(page);
      // What V8 would take as the compiled form of the page's next script from that URL.
      const cache = Buffer.from('not a real code cache, but the renderer would be handed it').toString('base64');
      await expect(session.send('Page.addCompilationCache', { url: `${site.url}/app.js`, data: cache })).rejects.toThrow(
        /Page\.addCompilationCache refused by the service: it hands the renderer compiled code/,
      );
      await expect(session.send('Page.produceCompilationCache', { scripts: [{ url: `${site.url}/app.js` }] })).rejects.toThrow(
        /refused by the service/,
      );
      await expect(session.send('LayerTree.loadSnapshot', { tiles: [{ x: 0, y: 0, picture: cache }] })).rejects.toThrow(
        /refused by the service: it hands the renderer serialised Skia pictures/,
      );
      await expect((await browser.newBrowserCDPSession()).send('Browser.setDockTile', { image: cache })).rejects.toThrow(
        /refused by the service: it hands the browser process an image to decode/,
      );
      // The refusals are answered by the service; the browser and the session carry on.
      expect(await page.evaluate(() => document.querySelector('#greeting')?.textContent)).toBe('Hello from the test site');
      await browser.close();
    } finally {
      await stop(sessionId, resource.id);
    }
  });

  it('keeps Puppeteer’s connect working: pages, script, screenshots, PDFs, cookies, new contexts', async () => {
    const { sessionId, resource } = await startBrowser();
    try {
      const browser = await puppeteer.connect({ browserWSEndpoint: resource.remoteUrl });
      const page = await browser.newPage();
      await page.goto(`${site.url}/form`);
      await page.type('#name', 'Grace');
      await page.click('#send');
      expect(await page.$eval('#out', (element) => element.textContent)).toBe('Hello Grace');
      expect(
        Buffer.from(await page.screenshot())
          .subarray(1, 4)
          .toString(),
      ).toBe('PNG');
      expect(
        Buffer.from(await page.pdf())
          .subarray(0, 5)
          .toString(),
      ).toBe('%PDF-');
      await browser.setCookie({ name: 'flavour', value: 'rye', domain: new URL(site.url).hostname, path: '/' });
      expect((await browser.cookies()).map((cookie) => cookie.name)).toContain('flavour');
      const isolated = await browser.createBrowserContext();
      const other = await isolated.newPage();
      await other.goto(`${site.url}/plain`);
      expect(await other.$eval('#greeting', (element) => element.textContent)).toBe('Hello from the test site');
      await isolated.close();
      await page.close();
      await browser.disconnect();
    } finally {
      await stop(sessionId, resource.id);
    }
  });
});

describe('resource URLs', () => {
  it('give remoteUrl only to callers who may write the session and read its cookies; readers watch without driving', async () => {
    const { sessionId, resource } = await startBrowser();
    try {
      const base = `/${project.slug}/api/sessions/${sessionId}/${resource.id}`;
      const reader = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${project.slug}.sessions.read`] });
      const writer = await createApiKey(stack, owner.token, {
        accessType: 'custom',
        permissions: [`${project.slug}.sessions.read`, `${project.slug}.sessions.write`],
      });
      const full = await createApiKey(stack, owner.token, { accessType: 'full' });

      const asReader = await stack.http.get(base, { apiKey: reader.secret });
      expect(asReader.status, asReader.text).toBe(200);
      expect(asReader.body.remoteUrl).toBeNull();
      expect(asReader.body.vncUrl).toMatch(/\/live\?token=/);
      const detail = await stack.http.get(`/${project.slug}/api/sessions/${sessionId}`, { apiKey: reader.secret });
      expect(detail.body.resources[0]).toMatchObject({ id: resource.id, remoteUrl: null });
      expect((await stack.http.get(base, { apiKey: writer.secret })).body.remoteUrl).toBeNull();
      const asFull = await stack.http.get(base, { apiKey: full.secret });
      expect(asFull.body.remoteUrl).toMatch(/\/cdp\?token=/);
      expect(asFull.body.vncUrl).toMatch(/\/live\?token=/);

      // The reader's live view shows the page and drops its input; a writer's view drives it.
      const browser = await chromium.connectOverCDP(asFull.body.remoteUrl);
      const page = await browser.contexts()[0]!.newPage();
      await page.goto(`${site.url}/watched`);
      await page.evaluate(() => {
        document.title = '';
        document.addEventListener('click', () => {
          document.title += 'click ';
        });
      });
      const viewer = await launchChromium();
      try {
        const watch = async (vncUrl: string) => {
          const view = await viewer.newPage();
          await view.goto(vncUrl);
          await view.waitForFunction(() => (window as unknown as { liveView: { frames: number } }).liveView.frames > 0, undefined, {
            timeout: 20_000,
          });
          await view.locator('#screen').click();
          return view;
        };
        await watch(asReader.body.vncUrl);
        await sleep(1500);
        expect(await page.title()).toBe('');
        const writerView = (await stack.http.get(base, { apiKey: writer.secret })).body.vncUrl;
        await watch(writerView);
        await expect.poll(() => page.title(), { timeout: 10_000 }).toContain('click');
      } finally {
        await viewer.close();
      }
      await browser.close();
    } finally {
      await stop(sessionId, resource.id);
    }
  });

  it('carry short-lived tokens for one resource, one use, while it runs', async () => {
    const a = await startBrowser();
    const b = await startBrowser();
    try {
      const token = (url: string) => new URL(url.replace(/^ws/, 'http')).searchParams.get('token') as string;
      const { exp } = JSON.parse(Buffer.from(token(a.resource.remoteUrl).split('.')[1] as string, 'base64url').toString());
      expect(exp * 1000).toBeLessThanOrEqual(Date.now() + 15 * 60_000 + 5_000);
      expect(exp * 1000).toBeGreaterThan(Date.now() + 10 * 60_000);

      const cdpUrl = (resource: { id: string }, sessionId: string, t: string) =>
        `${stack.url.replace(/^http/, 'ws')}/${project.slug}/api/sessions/${sessionId}/${resource.id}/cdp?token=${t}`;
      // A live-view token does not open CDP; resource A's token does not open resource B.
      expect(await upgradeRefusal(cdpUrl(a.resource, a.sessionId, token(a.resource.vncUrl)))).toBe(401);
      expect(await upgradeRefusal(cdpUrl(b.resource, b.sessionId, token(a.resource.remoteUrl)))).toBe(401);
      // An expired one does not either, while a fresh one does.
      const tokens = new ResourceTokens(stack.serviceSecret);
      const expired = await tokens.sign(a.resource.id, 'cdp', new Date(Date.now() - 1000), { control: true });
      expect(await upgradeRefusal(cdpUrl(a.resource, a.sessionId, expired))).toBe(401);
      const browser = await chromium.connectOverCDP(a.resource.remoteUrl);
      expect(browser.contexts().length).toBeGreaterThan(0);
      await browser.close();
      // No token, no socket: nothing a stranger sends is read. With one, frames stop at 32 MiB.
      expect(await upgradeRefusal(cdpUrl(b.resource, b.sessionId, 'x'))).toBe(401);
      const fresh = await stack.http.get(`/${project.slug}/api/sessions/${a.sessionId}/${a.resource.id}`, { token: owner.token });
      expect(await closeCode(fresh.body.remoteUrl, (socket) => socket.send(Buffer.alloc(33 * 1024 * 1024, 'x')))).toBe(1009);

      // The live view's socket takes input events, not megabytes.
      const liveWs = a.resource.vncUrl.replace(/^http/, 'ws').replace('/live?', '/live/ws?');
      expect(await closeCode(liveWs, (socket) => socket.send(Buffer.alloc(100 * 1024, 'x')))).toBe(1009);

      // A stopped resource's tokens open nothing.
      await stop(a.sessionId, a.resource.id);
      expect(await upgradeRefusal(a.resource.remoteUrl)).toBe(404);
      expect(await upgradeRefusal(liveWs)).toBe(404);
    } finally {
      await stop(a.sessionId, a.resource.id);
      await stop(b.sessionId, b.resource.id);
    }
  });
});

describe('WebSockets a client abandons', () => {
  it('leave no connection to the browser open when closed while the token is checked', async () => {
    const { sessionId, resource } = await startBrowser();
    try {
      const row = await stack.orm.em.fork().findOneOrFail(SessionResource, { id: resource.id }, { fields: ['cdpEndpoint'] });
      const cdpSocket = cdpSocketOf(row.cdpEndpoint as string);
      const liveWs = resource.vncUrl.replace(/^http/, 'ws').replace('/live?', '/live/ws?');
      // The host's own Playwright and its fingerprint injector (a `desktop` session's) hold one
      // connection each to the browser's CDP pipe.
      const held = connectionsTo(cdpSocket);
      expect(held).toBe(2);
      // Gone as soon as the upgrade answers: the api is still checking the token then.
      const abandon = (url: string) =>
        new Promise<void>((resolve) => {
          const socket = new WebSocket(url);
          socket.on('open', () => socket.terminate());
          socket.on('close', () => resolve());
          socket.on('error', () => resolve());
        });
      for (let i = 0; i < 10; i++) await Promise.all([abandon(resource.remoteUrl), abandon(liveWs)]);
      await sleep(2000);
      expect(connectionsTo(cdpSocket)).toBe(held);
      // A client that stays is served.
      const raw = await rawCdp(resource.remoteUrl);
      expect((await raw.send('Browser.getVersion')).result?.product).toMatch(/Chrom/);
      expect(connectionsTo(cdpSocket)).toBe(held + 1);
      raw.close();
    } finally {
      await stop(sessionId, resource.id);
    }
  });
});

describe('capture', () => {
  it('answers 409 or 503, never 500, when the browser is gone', async () => {
    const { sessionId, resource } = await startBrowser();
    const base = `/${project.slug}/api/sessions/${sessionId}/${resource.id}`;
    const row = await stack.orm.em.fork().findOneOrFail(SessionResource, { id: resource.id });
    // Killed behind the service's back: the row still says running until the workflow notices.
    process.kill(row.pid as number, 'SIGKILL');
    const raced = await stack.http.get(`${base}/capture`, { token: owner.token });
    expect([409, 503], raced.text).toContain(raced.status);
    await expect
      .poll(async () => (await stack.http.get(base, { token: owner.token })).body.status, { timeout: 30_000, interval: 500 })
      .toBe('stopped');
    const after = await stack.http.get(`${base}/capture`, { token: owner.token });
    expect(after.status, after.text).toBe(409);
    expect(after.body.code).toBe('browser_not_running');
  });
});

describe('launch arguments', () => {
  it('refuses flags that write host files or open debugging surfaces, and control characters, when saved', async () => {
    const refused = [
      '--ssl-key-log-file=/tmp/keys',
      '--log-file=/tmp/log',
      '--enable-logging=stderr',
      '--trace-startup-file=/tmp/t',
      '--trace-startup',
      '--disk-cache-dir=/tmp/c',
      '--crash-dumps-dir=/tmp/d',
      '--remote-debugging-port=9222',
      '--remote-debugging-pipe',
      '--user-data-dir=/tmp/u',
      '--profile-directory=../../etc',
      '--load-extension=/tmp/e',
      '--custom-devtools-frontend=file:///tmp',
      '--enable-gpu-benchmarking',
      '--native-messaging-connect-host=x',
      '"--user-agent=a\u0000b"',
      '"--user-agent=a\nb"',
    ];
    for (const args of refused) {
      const created = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'flags', args }, { token: owner.token });
      expect(created.status, `${args}: ${created.text}`).toBe(400);
      // A NUL is refused by the API's own input check before the flag rules see it.
      expect(created.body.code, args).toMatch(/^invalid_(launch_args|input)$/);
    }
    const fine = await stack.http.put(
      `/${project.slug}/api/sessions`,
      { name: 'flags', args: '--user-agent="Test Agent/1.0"\n--lang=de' },
      { token: owner.token },
    );
    expect(fine.status, fine.text).toBe(200);
  });
});
