import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, registerUser } from '../../support/accounts.ts';
import { ownAddressSpellings } from '../../support/ownAddress.ts';
import { startTestSite } from '../../support/pages.ts';
import { createPipeline, settledRun, startRun } from '../../support/pipelines.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';

/**
 * The egress policy, as a tenant would try to get around it: every way to the service's own
 * network is refused, below the page, in a CDP session and in a pipeline run; the pages the
 * operator allowed (the test site, on 127.0.0.5) work.
 */

let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
/** A service on loopback that no browser may reach: it counts every request and WebSocket. */
let internal: http.Server;
let internalPort: number;
const reached: string[] = [];
let owner: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };
let sessionId: string;

beforeAll(async () => {
  internal = http.createServer((req, res) => {
    reached.push(`${req.method} ${req.url}`);
    res.setHeader('access-control-allow-origin', '*');
    res.end('internal secrets');
  });
  internal.on('upgrade', (req, socket) => {
    reached.push(`upgrade ${req.url}`);
    socket.destroy();
  });
  // Both loopbacks, 127.0.0.1 and ::1.
  await new Promise<void>((resolve) => internal.listen(0, '::', resolve));
  internalPort = (internal.address() as AddressInfo).port;
  stack = await startTestStack({}, { browserHost: true });
  site = await startTestSite({
    '/to-internal': (_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${internalPort}/redirected` });
      res.end();
    },
    '/tries': (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<!doctype html><title>tries</title><h1>tries</h1>
<img src="http://127.0.0.1:${internalPort}/subresource.png">
<script>
window.outcomes = {};
fetch('http://127.0.0.1:${internalPort}/fetched').then(() => { outcomes.fetch = 'reached'; }, () => { outcomes.fetch = 'failed'; });
const ws = new WebSocket('ws://127.0.0.1:${internalPort}/socket');
ws.onopen = () => { outcomes.ws = 'reached'; };
ws.onerror = () => { outcomes.ws = 'failed'; };
</script>`);
    },
  });
  owner = await registerUser(stack);
  project = await createProject(stack, owner.token);
  const session = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'tenant' }, { token: owner.token });
  sessionId = session.body.id;
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await site?.close();
  internal?.closeAllConnections();
  await new Promise((resolve) => internal?.close(resolve));
});

async function navigationFails(page: Page, url: string) {
  const error = await page.goto(url, { timeout: 15_000 }).then(
    () => null,
    (failure: Error) => failure,
  );
  expect(error?.message ?? 'it loaded', `${url} should not load`).toMatch(/net::ERR_/);
}

describe('the egress policy', () => {
  it('keeps a CDP session off loopback, by literal, DNS name, IPv6, redirect, fetch, WebSocket and subresource; allowed pages load', async () => {
    const started = await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/start`, undefined, { token: owner.token });
    expect(started.status, started.text).toBe(200);
    const browser = await chromium.connectOverCDP(started.body.remoteUrl);
    try {
      const page = await browser.contexts()[0]!.newPage();
      await navigationFails(page, `http://127.0.0.1:${internalPort}/literal`);
      await navigationFails(page, `http://localhost:${internalPort}/by-name`);
      await navigationFails(page, `http://[::1]:${internalPort}/ipv6`);
      await navigationFails(page, `http://[::ffff:127.0.0.1]:${internalPort}/mapped`);
      await navigationFails(page, `http://2130706433:${internalPort}/decimal`);
      await navigationFails(page, `${site.url}/to-internal`);
      // The service itself, on its private address.
      await navigationFails(page, `${stack.url}/api`);

      // A fresh tab: the last one may still be settling on its error page.
      const tries = await browser.contexts()[0]!.newPage();
      await tries.goto(`${site.url}/tries`);
      expect(await tries.textContent('h1')).toBe('tries');
      await expect
        .poll(() => tries.evaluate(() => (window as unknown as { outcomes: object }).outcomes), { timeout: 15_000 })
        .toEqual({
          fetch: 'failed',
          ws: 'failed',
        });
      expect(reached).toEqual([]);

      const logs = await stack.http.get(`/${project.slug}/api/sessions/${sessionId}/${started.body.id}/logs?limit=200`, {
        token: owner.token,
      });
      const blocked = logs.body.filter((entry: { area: string; message: string }) => /egress policy/.test(entry.message));
      expect(blocked.length).toBeGreaterThan(0);
      expect(blocked[0].message).toMatch(/blocked a connection to .*:\d+: .* (not a globally routable address|an address of this machine)/);
    } finally {
      await browser.close();
      await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/${started.body.id}/stop`, undefined, { token: owner.token });
    }
  }, 90_000);

  it('keeps a browser off the machine’s own addresses however they are spelled', async () => {
    // Each of these lands on \`internal\` (listening on every address) if the policy lets it through.
    const spellings = [...ownAddressSpellings, '[::ffff:7f00:1]', '[::ffff:127.0.0.1]', '2130706433', '0x7f.0.0.1', '127.1', '[::1]'];
    const started = await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/start`, undefined, { token: owner.token });
    expect(started.status, started.text).toBe(200);
    const browser = await chromium.connectOverCDP(started.body.remoteUrl);
    try {
      for (const host of spellings) {
        // A fresh tab each time: the last one may still be settling on its error page.
        const page = await browser.contexts()[0]!.newPage();
        await navigationFails(page, `http://${host}:${internalPort}/own`);
        await page.close();
      }
      expect(reached).toEqual([]);
      const logs = await stack.http.get(`/${project.slug}/api/sessions/${sessionId}/${started.body.id}/logs?limit=200`, {
        token: owner.token,
      });
      const blocked = logs.body
        .map((entry: { message: string }) => entry.message)
        .filter((message: string) => /egress policy/.test(message) && message.includes(`:${internalPort}:`));
      expect(blocked.length).toBeGreaterThanOrEqual(spellings.length);
      for (const message of blocked) expect(message).toMatch(/is an address of this machine/);
    } finally {
      await browser.close();
      await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/${started.body.id}/stop`, undefined, { token: owner.token });
    }
  }, 120_000);

  it('keeps a pipeline run off loopback: its page.goto fails like a network error', async () => {
    const pipelineId = await createPipeline(
      stack,
      project.slug,
      { token: owner.token },
      {
        nodes: {
          page: { type: 'browser.page' },
          open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `http://localhost:${internalPort}/from-a-run` } },
          text: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: 'body' } },
        },
        outputs: { text: { $ref: 'text.text' } },
      },
    );
    const { runUrl } = await startRun(stack, project.slug, { token: owner.token }, pipelineId, sessionId);
    const run = await settledRun(stack, runUrl, { token: owner.token });
    expect(run.status.pipeline).toBe('failed');
    expect(run.error).toMatchObject({ node: 'open' });
    expect(run.error.message).toMatch(/net::ERR_/);
    expect(reached).toEqual([]);
  }, 90_000);
});
