import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionResource } from '../../../db/entities/index.ts';
import { createProject, registerUser } from '../../support/accounts.ts';
import { launchChromium } from '../../support/chromium.ts';
import { clickDownloadLink, startTestSite } from '../../support/pages.ts';
import { createPipeline, settledRun, startRun } from '../../support/pipelines.ts';
import { cdpSocketOf, chromiumProcesses } from '../../support/sandbox.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';

/**
 * The attacks of a tenant who holds full CDP (a `remoteUrl`), each as a test that must fail to
 * escape the browser's sandbox. Where the CDP guard would refuse the attack first, the test also
 * makes it over the host's own pipe (which no guard reads), so that the kernel's fence is what is
 * tested: a new context with `direct://`, other browsers' DevTools, `file:` pages, WebRTC around
 * the proxy, downloads, and the host's files.
 */

let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
let owner: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };
/** A service of the host on every address (a stand-in for Temporal's UI, PostgreSQL, …). */
let hostService: http.Server;
let hostServicePort: number;
const reached: string[] = [];

beforeAll(async () => {
  hostService = http.createServer((req, res) => {
    reached.push(`${req.method} ${req.url}`);
    res.setHeader('access-control-allow-origin', '*');
    res.end('host secrets');
  });
  await new Promise<void>((resolve) => hostService.listen(0, '::', resolve));
  hostServicePort = (hostService.address() as AddressInfo).port;
  stack = await startTestStack({}, { browserHost: true });
  site = await startTestSite({
    '/download': (_req, res) => {
      res.setHeader('content-type', 'application/octet-stream');
      res.setHeader('content-disposition', 'attachment; filename="sandbox-payload.txt"');
      res.end('sandbox download bytes');
    },
  });
  owner = await registerUser(stack);
  project = await createProject(stack, owner.token);
}, 120_000);
afterAll(async () => {
  await site?.close();
  await stack?.close();
  await new Promise((resolve) => hostService?.close(resolve));
});

type Started = { sessionId: string; resource: { id: string; remoteUrl: string }; pid: number; cdpEndpoint: string };

async function startBrowser(): Promise<Started> {
  const created = await stack.http.put(`/${project.slug}/api/sessions`, { name: `sbx-${Date.now()}` }, { token: owner.token });
  expect(created.status, created.text).toBe(200);
  const sessionId = created.body.id as string;
  const started = await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/start`, undefined, { token: owner.token });
  expect(started.status, started.text).toBe(200);
  const row = await stack.orm.em.fork().findOneOrFail(SessionResource, { id: started.body.id }, { fields: ['cdpEndpoint', 'pid'] });
  return { sessionId, resource: started.body, pid: row.pid as number, cdpEndpoint: row.cdpEndpoint as string };
}

async function stop(started: Started) {
  await stack.http.post(`/${project.slug}/api/sessions/${started.sessionId}/${started.resource.id}/stop`, undefined, {
    token: owner.token,
  });
}

/** What a page shows after trying `url`: its text, or the navigation error. */
async function tryOpen(page: Page, url: string) {
  try {
    await page.goto(url, { timeout: 10_000 });
    return await page.evaluate(() => document.body?.textContent ?? '');
  } catch (error) {
    return `failed: ${String(error).split('\n')[0]}`;
  }
}

/** Both ways in to a browser: the tenant's (remoteUrl, through the guard) and the host's own pipe (no guard). */
async function bothWaysIn(started: Started, work: (browser: Browser, way: string) => Promise<void>) {
  for (const [way, url] of [
    ['remoteUrl', started.resource.remoteUrl],
    ['the host pipe, unguarded', cdpSocketOf(started.cdpEndpoint)],
  ] as const) {
    const browser = await chromium.connectOverCDP(way === 'remoteUrl' ? url : `ws+unix://${url}:/cdp`);
    try {
      await work(browser, way);
    } finally {
      await browser.close();
    }
  }
}

describe('a sandboxed browser', () => {
  it('runs as the sandbox user, in user, mount, network and pid namespaces of its own', async () => {
    const started = await startBrowser();
    try {
      const processes = chromiumProcesses(started.pid);
      expect(processes.length).toBeGreaterThan(1);
      const sandboxUid = Number(spawnSync('id', ['-u', stack.config.browsers.sandboxUser as string], { encoding: 'utf8' }).stdout);
      const host = Object.fromEntries(['user', 'mnt', 'net', 'pid'].map((kind) => [kind, readlinkSync(`/proc/self/ns/${kind}`)]));
      for (const facts of processes) {
        expect(facts.uid, `${facts.command} (${facts.pid}) runs as`).toBe(sandboxUid);
        for (const kind of ['user', 'mnt', 'net', 'pid'])
          expect(facts.namespaces[kind], `${kind} namespace of ${facts.pid}`).not.toBe(host[kind]);
      }
      // Chromium's own sandbox is on: no --no-sandbox.
      const commandLine = readFileSync(`/proc/${processes[0]?.pid}/cmdline`, 'utf8').split('\0');
      expect(commandLine).not.toContain('--no-sandbox');
    } finally {
      await stop(started);
    }
  });

  it('sees none of the host’s files: no DATA_DIR, no checkout, no /etc/shadow, no other browser', async () => {
    const first = await startBrowser();
    const second = await startBrowser();
    try {
      const [browserProcess] = chromiumProcesses(first.pid);
      if (!browserProcess) throw new Error('no Chromium process');
      // The browser's root, as the kernel shows it to that process.
      const root = `/proc/${browserProcess.pid}/root`;
      const secretsOfHost = [
        path.join(stack.config.dataDir, 'jwt-secret'),
        path.join(process.cwd(), 'package.json'),
        '/etc/shadow',
        '/root',
        '/var/lib/postgresql',
        cdpSocketOf(second.cdpEndpoint),
        path.dirname(cdpSocketOf(second.cdpEndpoint)),
        cdpSocketOf(first.cdpEndpoint),
      ];
      for (const file of secretsOfHost) expect(existsSync(`${root}${file}`), `${file} inside the sandbox`).toBe(false);
      // Nothing of DATA_DIR; of the folder beside it, only the empty folders leading to its own profile.
      expect(existsSync(`${root}${stack.config.dataDir}`)).toBe(false);
      expect(readdirSync(`${root}${stack.config.sharedDataDir}`)).toEqual(['browsers']);
      // What it does see: the system, read-only, and its own profile.
      expect(existsSync(`${root}/usr/lib/chromium/chromium`)).toBe(true);
      const profile = path.join(path.dirname(cdpSocketOf(first.cdpEndpoint)), 'profile');
      expect(readdirSync(`${root}${profile}`).length).toBeGreaterThan(0);
      expect(statSync(`${root}/tmp`).isDirectory()).toBe(true);
      // Page script and CDP cannot open the host's files either: the policy refuses file: pages.
      await bothWaysIn(first, async (browser, way) => {
        const page = await browser.contexts()[0]!.newPage();
        await page.goto(`${site.url}/plain`);
        await page.evaluate(() => {
          location.href = 'file:///etc/passwd';
        });
        await sleep(1000);
        expect(await page.evaluate(() => document.body?.textContent ?? '').catch(() => ''), way).not.toMatch(/root:x?:0/);
        if (way !== 'remoteUrl') expect(await tryOpen(page, 'file:///etc/passwd'), way).toMatch(/failed: .*ERR_BLOCKED_BY_ADMINISTRATOR/);
        await page.close();
      });
    } finally {
      await stop(first);
      await stop(second);
    }
  });

  it('reaches nothing but its egress proxy: a direct:// context has no route, over remoteUrl or the unguarded pipe', async () => {
    const started = await startBrowser();
    try {
      await bothWaysIn(started, async (browser, way) => {
        // Through the proxy, the allowed test site loads (the fence does not break browsing).
        const normal = await browser.contexts()[0]!.newPage();
        expect(await tryOpen(normal, `${site.url}/plain`), way).toContain('');
        expect(normal.url()).toBe(`${site.url}/plain`);
        await normal.close();
        let context: Awaited<ReturnType<Browser['newContext']>>;
        try {
          context = await browser.newContext({ proxy: { server: 'direct://' } });
        } catch (error) {
          // The guard refuses a tenant's own proxy settings outright.
          expect(way, String(error)).toBe('remoteUrl');
          return;
        }
        const page = await context.newPage();
        for (const target of [
          `${site.url}/plain`,
          `http://127.0.0.1:${hostServicePort}/`,
          `http://[::1]:${hostServicePort}/`,
          `${stack.url}/api`,
        ]) {
          expect(await tryOpen(page, target), `${way}: ${target}`).toMatch(/^failed: /);
        }
        const loaded = await page
          .evaluate(
            (port) =>
              fetch(`http://127.0.0.1:${port}/fetched`).then(
                () => 'reached',
                () => 'failed',
              ),
            hostServicePort,
          )
          .catch(() => 'failed');
        expect(loaded).toBe('failed');
        await context.close();
      });
      expect(reached).toEqual([]);
    } finally {
      await stop(started);
    }
  });

  it('keeps no download on the host, whatever download behaviour a client sets: the service takes it from the browser’s folder', {
    timeout: 90_000,
  }, async () => {
    const started = await startBrowser();
    try {
      await bothWaysIn(started, async (browser, way) => {
        const page = await browser.contexts()[0]!.newPage();
        const cdp = await browser.newBrowserCDPSession();
        await cdp.send('Browser.setDownloadBehavior', { behavior: 'default' } as never).catch(() => {});
        await page.goto(`${site.url}/plain`);
        await clickDownloadLink(page, `${site.url}/download`, 'sandbox-payload.txt');
        await sleep(2000);
        await page.close();
        expect(way).toBeTruthy();
      });
      // Both ways in, the file landed in the browser's own folder and the service took it from there.
      const kept = await stack.http.get(`/${project.slug}/api/sessions/${started.sessionId}/${started.resource.id}/downloads`, {
        token: owner.token,
      });
      expect(kept.body.map((file: { name: string }) => file.name)).toEqual(['sandbox-payload.txt', 'sandbox-payload.txt']);
      const folder = path.dirname(cdpSocketOf(started.cdpEndpoint));
      // The profile is a tmpfs inside the sandbox: the browser's own view of it, and of its /tmp, too.
      const inside = `/proc/${chromiumProcesses(started.pid)[0]?.pid}/root`;
      const found = spawnSync(
        'find',
        [folder, '/root', '/tmp', `${inside}${folder}`, `${inside}/tmp`, '-maxdepth', '6', '-name', 'sandbox-payload*'],
        {
          encoding: 'utf8',
        },
      );
      expect(found.status, found.stderr).toBe(0);
      expect(found.stdout.split('\n').filter(Boolean)).toEqual([]);
    } finally {
      await stop(started);
    }
  });
});

/** A UDP listener that counts the datagrams it gets (STUN and TURN are UDP). */
async function udpListener(address = '127.0.0.1') {
  const socket = dgram.createSocket(address.includes(':') ? 'udp6' : 'udp4');
  const received: Buffer[] = [];
  socket.on('message', (message) => received.push(message));
  await new Promise<void>((resolve) => socket.bind(0, address, resolve));
  return { port: (socket.address() as AddressInfo).port, received, close: () => socket.close() };
}

/** Page script gathering ICE candidates against STUN and TURN servers at `address:port`. */
const webRtcProbe = async ({ address, port }: { address: string; port: number }) => {
  const connection = new RTCPeerConnection({
    iceServers: [{ urls: `stun:${address}:${port}` }, { urls: `turn:${address}:${port}?transport=udp`, username: 'u', credential: 'p' }],
  });
  connection.createDataChannel('probe');
  await connection.setLocalDescription(await connection.createOffer());
  await new Promise((resolve) => setTimeout(resolve, 3000));
  connection.close();
  return 'gathered';
};

/** A network namespace of the test's own, linked to this one by a veth pair, with a UDP listener inside. */
async function namespaceListener() {
  const name = `bfsbx${process.pid % 10000}`;
  const subnet = `10.213.${process.pid % 250}`;
  const run = (...args: string[]) => {
    const result = spawnSync('ip', args, { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`ip ${args.join(' ')}: ${result.stderr}`);
  };
  spawnSync('ip', ['netns', 'delete', name]);
  spawnSync('ip', ['link', 'delete', `${name}h`]);
  run('netns', 'add', name);
  run('link', 'add', `${name}h`, 'type', 'veth', 'peer', 'name', `${name}n`, 'netns', name);
  run('addr', 'add', `${subnet}.1/30`, 'dev', `${name}h`);
  run('link', 'set', `${name}h`, 'up');
  run('netns', 'exec', name, 'ip', 'addr', 'add', `${subnet}.2/30`, 'dev', `${name}n`);
  run('netns', 'exec', name, 'ip', 'link', 'set', `${name}n`, 'up');
  run('netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up');
  const script = `const s=require('dgram').createSocket('udp4');s.on('message',()=>console.log('datagram'));s.bind(3478,'${subnet}.2',()=>console.log('ready'));`;
  const listener = spawn('ip', ['netns', 'exec', name, process.execPath, '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  listener.stdout.on('data', (chunk) => {
    output += String(chunk);
  });
  await expect.poll(() => output.includes('ready'), { timeout: 10_000 }).toBe(true);
  return {
    address: `${subnet}.2`,
    port: 3478,
    datagrams: () => output.split('\n').filter((line) => line === 'datagram').length,
    close() {
      listener.kill();
      spawnSync('ip', ['netns', 'delete', name]);
      spawnSync('ip', ['link', 'delete', `${name}h`]);
    },
  };
}

describe('WebRTC', () => {
  it('sends no UDP around the proxy, to loopback or into a network namespace, from page script or a pipeline', async () => {
    const loopback = await udpListener();
    const namespace = await namespaceListener();
    const targets = [
      { address: '127.0.0.1', port: loopback.port, count: () => loopback.received.length },
      { address: namespace.address, port: namespace.port, count: namespace.datagrams },
    ];
    try {
      // The control: an unsandboxed Chromium of the test's own does send, so silence below means the fence.
      const control = await launchChromium();
      const controlPage = await control.newPage();
      await controlPage.goto(`${site.url}/plain`);
      for (const { address, port } of targets) await controlPage.evaluate(webRtcProbe, { address, port });
      await control.close();
      for (const target of targets) expect(target.count(), `control datagrams to ${target.address}`).toBeGreaterThan(0);
      const before = targets.map((target) => target.count());

      const started = await startBrowser();
      try {
        const browser = await chromium.connectOverCDP(started.resource.remoteUrl);
        const page = await browser.contexts()[0]!.newPage();
        await page.goto(`${site.url}/plain`);
        for (const { address, port } of targets) await page.evaluate(webRtcProbe, { address, port });
        await browser.close();

        const pipelineId = await createPipeline(
          stack,
          project.slug,
          { token: owner.token },
          {
            nodes: {
              page: { type: 'browser.page' },
              open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/plain` } },
              probe: {
                type: 'page.evaluate',
                inputs: {
                  page: { $ref: 'open.page' },
                  script: `const probe = ${webRtcProbe.toString()}; for (const target of arg) await probe(target); return 'done'`,
                  arg: targets.map(({ address, port }) => ({ address, port })),
                },
              },
              // Page script sends its page to a file: URL, a renderer navigation no guard sees.
              escape: {
                type: 'page.evaluate',
                inputs: {
                  page: { $ref: 'probe.page' },
                  script: "setTimeout(() => { location.href = 'file:///etc/passwd' }, 10); return 'sent'",
                },
              },
              read: {
                type: 'page.evaluate',
                inputs: {
                  page: { $ref: 'escape.page' },
                  script:
                    'await new Promise((resolve) => setTimeout(resolve, 1500)); return location.href + " " + (document.body ? document.body.innerText : "")',
                },
              },
            },
            outputs: { probed: { $ref: 'probe.result' }, read: { $ref: 'read.result' } },
          },
        );
        const { runUrl } = await startRun(stack, project.slug, { token: owner.token }, pipelineId, started.sessionId);
        const run = await settledRun(stack, runUrl, { token: owner.token });
        expect(run.status.pipeline, JSON.stringify(run.error)).toBe('succeeded');
        expect(run.result?.probed, JSON.stringify(run)).toBe('done');
        expect(run.result?.read).not.toMatch(/root:x?:0/);
        await sleep(1000);
        expect(targets.map((target) => target.count())).toEqual(before);
      } finally {
        await stop(started);
      }
    } finally {
      loopback.close();
      namespace.close();
    }
  }, 120_000);
});
