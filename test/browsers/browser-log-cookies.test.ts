import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import { startTestSite } from '../support/pages.ts';
import { stopAndWait } from '../support/resources.ts';
import { readSse } from '../support/sse.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * A browser's own log quotes the addresses its pages open and request, and a page can put a
 * cookie value into one: readers who may not read the session's cookies get those lines withheld,
 * as the run log's are (server/logs/logResponses.ts).
 */

const COOKIE_VALUE = 'jar-value-c41e07';

let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;

beforeAll(async () => {
  stack = await startTestStack({}, { browserHost: true });
  site = await startTestSite({
    // Sets a cookie, then carries it in the address of the next page and of a request that fails
    // (Chromium itself refuses port 9: nothing is dialled).
    '/jar': (_req, res) => {
      res.setHeader('set-cookie', `sid=${COOKIE_VALUE}; Path=/`);
      res.setHeader('content-type', 'text/html');
      res.end(
        `<!doctype html><title>jar</title><script>
          const value = document.cookie.split('sid=')[1];
          fetch('http://127.0.0.5:9/gone?n=' + value).catch(() => {}).finally(() => { location.href = '/landing?n=' + value; });
        </script>`,
      );
    },
    '/landing': (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<!doctype html><title>landed</title><script>console.log('landed')</script>`);
    },
  });
}, 180_000);
afterAll(async () => {
  await site?.close();
  await stack?.close();
});

type Line = { area: string; context: string; message: string; object: unknown };

describe('a browser’s log', () => {
  it('withholds the addresses a page put its cookie into from readers without cookies.read, as JSON and as SSE', async () => {
    const owner = await registerUser(stack);
    const project = await createProject(stack, owner.token);
    const created = await stack.http.put(
      `/${project.slug}/api/sessions`,
      { name: 'jar', description: '', screen: { width: 1280, height: 720 }, args: '', image: 'chromium', cookies: [] },
      { token: owner.token },
    );
    expect(created.status, created.text).toBe(200);
    const sessionId = created.body.id as string;
    const reader = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${project.slug}.sessions.read`] });
    const cookieReader = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${project.slug}.sessions.read`, `${project.slug}.cookies.read.${sessionId}`],
    });

    const started = await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/start`, undefined, { token: owner.token });
    expect(started.status, started.text).toBe(200);
    const resource = `/${project.slug}/api/sessions/${sessionId}/${started.body.id}`;
    const browser = await chromium.connectOverCDP(started.body.remoteUrl);
    try {
      const page = await browser.contexts()[0]!.newPage();
      await page.goto(`${site.url}/jar`);
      await page.waitForURL(/\/landing\?n=/, { timeout: 15_000 });

      // Who may read the cookies sees the lines whole: the value is in the addresses.
      const wholeLines = async () => (await stack.http.get(`${resource}/logs?limit=200`, { apiKey: cookieReader.secret })).body as Line[];
      await expect
        .poll(async () => (await wholeLines()).filter((line) => line.message.includes(COOKIE_VALUE)).map((line) => line.area), {
          timeout: 30_000,
        })
        .toEqual(expect.arrayContaining(['navigation', 'network']));
      await expect.poll(async () => (await wholeLines()).some((line) => line.message === 'landed'), { timeout: 30_000 }).toBe(true);
      const whole = await wholeLines();
      const wholeStream = await readSse(`${stack.url}${resource}/logs`, {
        headers: { 'x-api-key': cookieReader.secret },
        until: (events) => events.length >= whole.length,
      });
      expect(wholeStream.map((event) => event.data).join('\n')).toContain(COOKIE_VALUE);

      const seen = await stack.http.get(`${resource}/logs?limit=200`, { apiKey: reader.secret });
      expect(seen.status, seen.text).toBe(200);
      expect(seen.text).not.toContain(COOKIE_VALUE);
      const lines = (seen.body as Line[]).slice(0, whole.length);
      expect(lines.map((line) => line.area)).toEqual(whole.map((line) => line.area));
      for (const line of lines.filter((entry) => entry.area === 'navigation' || entry.area === 'network')) {
        expect(line).toMatchObject({
          context: 'withheld',
          message: expect.stringMatching(/^withheld: an address the browser opened/),
          object: null,
        });
      }
      // Console output keeps its text, not the page's address; the host's lifecycle lines stay whole.
      expect(lines.find((line) => line.area === 'console' && line.message === 'landed')).toMatchObject({ context: 'withheld' });
      expect(lines.find((line) => line.area === 'lifecycle')).toEqual(whole.find((line) => line.area === 'lifecycle'));
      const stream = await readSse(`${stack.url}${resource}/logs`, {
        headers: { 'x-api-key': reader.secret },
        until: (events) => events.length >= whole.length,
      });
      expect(stream.length).toBeGreaterThanOrEqual(whole.length);
      expect(stream.map((event) => event.data).join('\n')).not.toContain(COOKIE_VALUE);
    } finally {
      await browser.close();
      await stopAndWait(stack.http, resource, { token: owner.token });
    }
  }, 180_000);
});
