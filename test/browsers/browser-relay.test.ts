/// <reference lib="dom" />
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readlinkSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { BrowserHost, SessionResource } from '../../db/entities/index.ts';
import { RelayTokens } from '../../server/browsers/tokens/relayTokens.ts';
import { sharedDataDirOf } from '../../server/config.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import { browserHostProcess } from '../support/browserHostProcess.ts';
import { launchChromium } from '../support/chromium.ts';
import { startTestSite } from '../support/pages.ts';
import { stopAndWait } from '../support/resources.ts';
import { cdpSocketOf, chromiumProcesses } from '../support/sandbox.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Browser hosts apart from the api: the api on 127.0.0.1, two host processes on 127.0.0.2 and
 * 127.0.0.3, each reached only through its relay. Chromium's DevTools are a pipe to its host.
 */

let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
let owner: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };
const suffix = randomBytes(4).toString('hex');
const hosts = [
  // The first keeps one warm browser, whose claim by a start sets cookies through the relay.
  { id: `relay-a-${suffix}`, address: '127.0.0.2', env: { BROWSER_WARM_POOL: '1', BROWSER_WARM_RECENT: '0' } },
  { id: `relay-b-${suffix}`, address: '127.0.0.3', env: { BROWSER_WARM_POOL: '0', BROWSER_WARM_RECENT: '0' } },
].map((host) => ({
  ...host,
  dataDir: mkdtempSync(path.join(os.tmpdir(), 'bf-relay-host-')),
  process: undefined as ReturnType<typeof browserHostProcess> | undefined,
}));

beforeAll(async () => {
  stack = await startTestStack();
  site = await startTestSite();
  owner = await registerUser(stack);
  project = await createProject(stack, owner.token);
  for (const host of hosts) {
    host.process = browserHostProcess(stack, {
      hostId: host.id,
      dataDir: host.dataDir,
      address: host.address,
      env: host.env,
    });
    host.process.start();
  }
  const deadline = Date.now() + 60_000;
  for (const host of hosts) {
    while (!(await host.process?.alive())) {
      if (Date.now() > deadline) throw new Error(`browser host ${host.id} did not start:\n${host.process?.output}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}, 120_000);
afterAll(async () => {
  await Promise.all(hosts.map((host) => host.process?.stop()));
  await site?.close();
  await stack?.close();
});

const as = () => ({ token: owner.token });
const resourcePath = (resource: { id: string; session: string }) => `/${project.slug}/api/sessions/${resource.session}/${resource.id}`;

/**
 * A started browser on a host of its own: a screen no warm browser has, so it starts cold, and the
 * api puts it on the emptiest host.
 */
async function startCold(name: string) {
  const created = await stack.http.put(`/${project.slug}/api/sessions`, { name, screen: { width: 1000, height: 700 } }, as());
  expect(created.status, created.text).toBe(200);
  const started = await stack.http.post(`/${project.slug}/api/sessions/${created.body.id}/start`, undefined, as());
  expect(started.status, started.text).toBe(200);
  return started.body as { id: string; session: string; host: string; remoteUrl: string; vncUrl: string; warm: boolean };
}

async function registryRow(hostId: string) {
  return stack.orm.em.fork().findOneOrFail(BrowserHost, { id: hostId });
}

/** The browser's network namespaces (it has its own) and the socket its CDP pipe is served at. */
async function browserOf(resourceId: string) {
  const row = await stack.orm.em.fork().findOneOrFail(SessionResource, { id: resourceId }, { fields: ['cdpEndpoint', 'pid'] });
  return {
    socket: cdpSocketOf(row.cdpEndpoint as string),
    networks: new Set(chromiumProcesses(row.pid as number).map((facts) => facts.namespaces.net)),
  };
}

/** Whether a TCP connection from the api's address (127.0.0.1) to `address:port` opens. */
function tcpOpens(address: string, port: number) {
  return new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: address, port, localAddress: '127.0.0.1' });
    socket.setTimeout(3_000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Open TCP connections to `address:port` on this machine (IPv4), from /proc/net/tcp. */
function establishedTo(address: string, port: number) {
  const hexAddress = address
    .split('.')
    .map((part) => Number(part).toString(16).toUpperCase().padStart(2, '0'))
    .reverse()
    .join('');
  const target = `${hexAddress}:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[2] === target && fields[3] === '01').length;
}

/** What a relay answers a WebSocket handshake: 101, or its status and error body. */
function handshake(url: string) {
  return new Promise<{ status: number; body?: { status: string; code: string; message: string } }>((resolve, reject) => {
    const request = http.request(url.replace(/^ws/, 'http'), {
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': randomBytes(16).toString('base64'),
      },
    });
    request.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0 });
    });
    request.on('response', (res) => {
      let text = '';
      res.on('data', (chunk) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
    });
    request.on('error', reject);
    request.end();
  });
}

/** A raw CDP call over `url`: the browser's product name. */
function browserProduct(url: string) {
  return new Promise<string>((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.once('open', () => socket.send(JSON.stringify({ id: 1, method: 'Browser.getVersion' })));
    socket.once('message', (data) => {
      socket.close();
      resolve((JSON.parse(String(data)) as { result: { product: string } }).result.product);
    });
    socket.once('error', reject);
  });
}

describe('browser hosts on addresses of their own', () => {
  it('serve sessions on both hosts over remoteUrl and the live view, through their relays only', async () => {
    const first = await startCold('relay-1');
    const second = await startCold('relay-2');
    expect(new Set([first.host, second.host])).toEqual(new Set(hosts.map((host) => host.id)));
    try {
      for (const resource of [first, second]) {
        const host = hosts.find((candidate) => candidate.id === resource.host);
        if (!host) throw new Error(`unknown host ${resource.host}`);
        const registry = await registryRow(host.id);
        expect(registry.address).toBe(host.address);
        expect(registry.relayPort).toBeGreaterThan(0);

        // Chromium has no DevTools port: its pipe is served at a Unix socket of the host, and it
        // lives in network namespaces of its own (its renderers in Chromium's), so nothing it
        // listens on is the host's.
        const fenced = await browserOf(resource.id);
        expect(fenced.socket.startsWith(path.join(sharedDataDirOf(host.dataDir), 'browsers', host.id))).toBe(true);
        expect(fenced.networks.has(readlinkSync('/proc/self/ns/net'))).toBe(false);
        expect(await tcpOpens(host.address, registry.relayPort as number)).toBe(true);

        // Playwright over remoteUrl: the api's CDP proxy, which dials the host's relay.
        const browser = await chromium.connectOverCDP(resource.remoteUrl);
        try {
          const context = browser.contexts()[0];
          if (!context) throw new Error('no default context');
          const page = await context.newPage();
          await page.goto(`${site.url}/on-${host.id}`);
          expect(await page.textContent('#greeting')).toBe('Hello from the test site');
          expect(establishedTo(host.address, registry.relayPort as number)).toBeGreaterThanOrEqual(1);
        } finally {
          await browser.close();
        }

        // The live view: its own CDP connection, through the same relay.
        const viewer = await launchChromium();
        try {
          const view = await viewer.newPage();
          await view.goto(resource.vncUrl);
          await view.waitForFunction(() => (window as unknown as { liveView: { frames: number } }).liveView.frames > 0, undefined, {
            timeout: 20_000,
          });
        } finally {
          await viewer.close();
        }

        // Cookie capture, the api's third way in.
        const captured = await stack.http.get(`${resourcePath(resource)}/capture`, as());
        expect(captured.status, captured.text).toBe(200);
      }
    } finally {
      await stopAndWait(stack.http, resourcePath(first), as());
      await stopAndWait(stack.http, resourcePath(second), as());
    }
  });

  it('set a warm browser’s cookies through the relay before the host has adopted it', async () => {
    const created = await stack.http.put(
      `/${project.slug}/api/sessions`,
      { name: 'warm-relay', cookies: [{ name: 'preset', value: 'through-the-relay', domain: '127.0.0.5', path: '/' }] },
      as(),
    );
    expect(created.status, created.text).toBe(200);
    // The first host's warm browser is offered once it has launched.
    const offers = () => stack.orm.em.fork().getConnection().execute(`select 1 from warm_browsers where host_id = ?`, [hosts[0]?.id]);
    await expect.poll(async () => (await offers()).length, { timeout: 60_000, interval: 250 }).toBe(1);
    const started = await stack.http.post(`/${project.slug}/api/sessions/${created.body.id}/start`, undefined, as());
    expect(started.status, started.text).toBe(200);
    expect(started.body).toMatchObject({ warm: true, host: hosts[0]?.id });
    try {
      const captured = await stack.http.get(`${resourcePath(started.body)}/capture`, as());
      expect(captured.status, captured.text).toBe(200);
      expect(captured.body.cookies).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'preset', value: 'through-the-relay' })]),
      );
    } finally {
      await stopAndWait(stack.http, resourcePath(started.body), as());
    }
  });
});

describe('a browser host’s relay', () => {
  it('refuses a missing token, one for another resource, an expired, a forged one and one for the other host', async () => {
    const first = await startCold('refused-1');
    const second = await startCold('refused-2');
    try {
      const [a, b] = [first, second].map((resource) => {
        const host = hosts.find((candidate) => candidate.id === resource.host);
        if (!host) throw new Error(`unknown host ${resource.host}`);
        return { resource, host };
      }) as [{ resource: typeof first; host: (typeof hosts)[0] }, { resource: typeof first; host: (typeof hosts)[0] }];
      expect(a.host.id).not.toBe(b.host.id);
      const relayOf = async (host: (typeof hosts)[0]) => `ws://${host.address}:${(await registryRow(host.id)).relayPort}`;
      const relayA = await relayOf(a.host);
      const at = (resourceId: string, token?: string) => `${relayA}/resources/${resourceId}${token === undefined ? '' : `?token=${token}`}`;
      const tokens = stack.relayTokens;

      // What the api mints opens the browser.
      expect(await browserProduct(at(a.resource.id, tokens.mint(a.resource.id, a.host.id)))).toMatch(/Chrom/);

      const refused = async (url: string, status: number, code: string, message?: RegExp) => {
        const answer = await handshake(url);
        expect(answer.status, url.replace(/token=.*/, 'token=…')).toBe(status);
        expect(answer.body).toMatchObject({ status: 'error', code });
        if (message) expect(answer.body?.message).toMatch(message);
      };
      await refused(at(a.resource.id), 401, 'invalid_token', /required/);
      // Another resource's token, at this resource's path.
      await refused(at(a.resource.id, tokens.mint(b.resource.id, a.host.id)), 401, 'invalid_token', /invalid/);
      // Expired: minted longer ago than a token lives.
      await refused(at(a.resource.id, tokens.mint(a.resource.id, a.host.id, Date.now() - 61_000)), 401, 'invalid_token', /expired/);
      // Forged: signed with another secret, or a genuine one with its expiry pushed out.
      const forger = new RelayTokens({ serviceSecret: randomBytes(32).toString('hex') });
      await refused(at(a.resource.id, forger.mint(a.resource.id, a.host.id)), 401, 'invalid_token', /invalid/);
      const [, mac] = tokens.mint(a.resource.id, a.host.id).split('.');
      await refused(at(a.resource.id, `${Math.floor(Date.now() / 1000) + 3600}.${mac}`), 401, 'invalid_token', /invalid/);
      // A token for this resource on the other host.
      await refused(at(a.resource.id, tokens.mint(a.resource.id, b.host.id)), 401, 'invalid_token', /invalid/);
      // A genuine token for this host, for a resource that does not run here.
      await refused(at(b.resource.id, tokens.mint(b.resource.id, a.host.id)), 403, 'forbidden');
      // The other host's relay takes its own resource's token, and not this one's.
      const relayB = await relayOf(b.host);
      expect(await browserProduct(`${relayB}/resources/${b.resource.id}?token=${tokens.mint(b.resource.id, b.host.id)}`)).toMatch(/Chrom/);
      await refused(`${relayB}/resources/${a.resource.id}?token=${tokens.mint(a.resource.id, a.host.id)}`, 401, 'invalid_token');

      // A stopped resource opens nothing, whatever its token.
      await stopAndWait(stack.http, resourcePath(a.resource), as());
      await refused(at(a.resource.id, tokens.mint(a.resource.id, a.host.id)), 403, 'forbidden');
      // Anything but a WebSocket handshake gets an error body too.
      const plain = await fetch(at(a.resource.id).replace(/^ws/, 'http'));
      expect(plain.status).toBe(400);
      expect(await plain.json()).toMatchObject({ code: 'websocket_required' });
    } finally {
      await stopAndWait(stack.http, resourcePath(first), as());
      await stopAndWait(stack.http, resourcePath(second), as());
    }
  });
});
