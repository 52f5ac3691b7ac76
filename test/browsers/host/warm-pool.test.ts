/// <reference lib="dom" />
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserHost, WarmBrowser } from '../../../db/entities/index.ts';
import { isAlive } from '../../../server/browsers/host/chromium/processes.ts';
import { defaultLaunchSignature, launchSignature } from '../../../server/browsers/launch/launchSignature.ts';
import { createProject, registerUser } from '../../support/accounts.ts';
import { stopAndWait } from '../../support/resources.ts';
import { startTestStack } from '../../support/stack.ts';

/**
 * Warm browsers by launch signature: the default pool, and one browser kept warm for launch
 * settings a host recently started cold (docs/browsers.md, Warm pool).
 */

type Started = { id: string; warm: boolean; remoteUrl: string | null };

async function openStack(env: Record<string, string>) {
  const stack = await startTestStack(env, { browserHost: true });
  const owner = await registerUser(stack);
  const project = await createProject(stack, owner.token);
  const sessions = `/${project.slug}/api/sessions`;
  return {
    stack,
    offers: () => stack.orm.em.fork().find(WarmBrowser, {}, { orderBy: { created: 'asc' } }),
    async createSession(body: Record<string, unknown> = {}) {
      const created = await stack.http.put(sessions, { name: `s-${Date.now()}`, ...body }, { token: owner.token });
      expect(created.status, created.text).toBe(200);
      return created.body.id as string;
    },
    async start(sessionId: string): Promise<Started> {
      const started = await stack.http.post(`${sessions}/${sessionId}/start`, undefined, { token: owner.token });
      expect(started.status, started.text).toBe(200);
      expect(started.body.status).toBe('running');
      return started.body;
    },
    async stop(sessionId: string, resourceId: string) {
      const stopped = await stopAndWait(stack.http, `${sessions}/${sessionId}/${resourceId}`, { token: owner.token });
      expect(stopped.ended.status).toBe('stopped');
    },
  };
}

/** The page size a client sees in the started browser, over its remoteUrl. */
/**
 * The size a new tab of the browser gets, waiting up to 10 s for `expected`: the host's Playwright
 * sizes a tab another client opened once it sees the new target, which under load lands a moment
 * after the tab exists.
 */
async function pageSize(started: Started, expected: { width: number; height: number }) {
  if (!started.remoteUrl) throw new Error('the owner got no remoteUrl');
  const browser = await chromium.connectOverCDP(started.remoteUrl);
  try {
    const context = browser.contexts()[0];
    if (!context) throw new Error('no default context');
    const page = await context.newPage();
    const size = () => page.evaluate(() => ({ width: innerWidth, height: innerHeight }));
    let last = await size();
    for (let waited = 0; waited < 10_000 && (last.width !== expected.width || last.height !== expected.height); waited += 100) {
      await page.waitForTimeout(100);
      last = await size();
    }
    return last;
  } finally {
    await browser.close();
  }
}

const screen = { width: 900, height: 650 };
const ownScreen = launchSignature({ image: 'chromium', screen, args: [] });
const ownScreenGerman = launchSignature({ image: 'chromium', screen, args: ['--lang=de'] });

describe('warm browsers by launch signature', () => {
  // One default warm browser, and room for one more of recently started settings.
  let t: Awaited<ReturnType<typeof openStack>>;
  const signatures = async () => (await t.offers()).map((offer) => offer.launchSignature).sort();

  beforeAll(async () => {
    t = await openStack({ BROWSER_WARM_POOL: '1', BROWSER_WARM_RECENT: '1' });
  });
  afterAll(async () => {
    await t?.stack.close();
  });

  it('gives a session with the default settings a default warm browser', async () => {
    await expect.poll(signatures, { timeout: 60_000 }).toEqual([defaultLaunchSignature]);
    const sessionId = await t.createSession();
    const started = await t.start(sessionId);
    expect(started.warm).toBe(true);
    expect(await pageSize(started, { width: 1280, height: 720 })).toEqual({ width: 1280, height: 720 });
    await t.stop(sessionId, started.id);
    // Refilled, and no browser warmed for the default settings beyond the pool.
    await expect.poll(signatures, { timeout: 60_000 }).toEqual([defaultLaunchSignature]);
  }, 120_000);

  it('a start that finds no warm browser while one is being launched takes that launch over', async () => {
    await expect.poll(signatures, { timeout: 60_000 }).toEqual([defaultLaunchSignature]);
    const pool = t.stack.browserHost?.pool;
    if (!pool) throw new Error('no browser host');
    const first = await t.createSession();
    const firstStarted = await t.start(first);
    expect(firstStarted.warm).toBe(true);
    // The pool refills a second after that start: the next start comes while the launch is under way.
    await expect.poll(() => pool.warmLaunching, { timeout: 30_000, interval: 5 }).toBe(1);
    const second = await t.createSession();
    const secondStarted = await t.start(second);
    expect(secondStarted.warm).toBe(false);
    // The launched browser went to that start: it was never offered, and the next refill is a second away.
    expect(pool.warmCount).toBe(0);
    expect(await t.offers()).toEqual([]);
    expect(await pageSize(secondStarted, { width: 1280, height: 720 })).toEqual({ width: 1280, height: 720 });
    await t.stop(first, firstStarted.id);
    await t.stop(second, secondStarted.id);
    await expect.poll(signatures, { timeout: 60_000 }).toEqual([defaultLaunchSignature]);
  }, 120_000);

  it('starts a session with its own screen cold once, then warm at that screen', async () => {
    const sessionId = await t.createSession({ screen });
    const first = await t.start(sessionId);
    expect(first.warm).toBe(false);
    expect(await pageSize(first, screen)).toEqual(screen);
    await t.stop(sessionId, first.id);

    // The host keeps one browser of these settings warm for the next start.
    await expect.poll(signatures, { timeout: 60_000 }).toEqual([defaultLaunchSignature, ownScreen].sort());
    // The registry says which settings the host keeps warm (placement's view of the host).
    const hostId = t.stack.config.browsers.hostId;
    await expect
      .poll(async () => ((await t.stack.orm.em.fork().findOne(BrowserHost, { id: hostId }))?.warmSignatures ?? []).sort(), {
        timeout: 15_000,
      })
      .toEqual([defaultLaunchSignature, ownScreen].sort());
    const second = await t.start(sessionId);
    expect(second.warm).toBe(true);
    expect(await pageSize(second, screen)).toEqual(screen);
    await t.stop(sessionId, second.id);
    // …and again once that one is taken.
    await expect.poll(signatures, { timeout: 60_000 }).toEqual([defaultLaunchSignature, ownScreen].sort());
  }, 180_000);

  it('keeps at most BROWSER_WARM_RECENT browsers of other settings, the least recently started giving way', async () => {
    await expect.poll(signatures, { timeout: 60_000 }).toEqual([defaultLaunchSignature, ownScreen].sort());
    const [ownScreenOffer] = (await t.offers()).filter((offer) => offer.launchSignature === ownScreen);
    if (!ownScreenOffer?.pid) throw new Error('no warm browser of the session’s screen with a pid');

    // The same screen with a flag is other launch settings: the browser warm for the screen alone does not serve it.
    const germanId = await t.createSession({ screen, args: '--lang=de' });
    const german = await t.start(germanId);
    expect(german.warm).toBe(false);
    await t.stop(germanId, german.id);

    // Only one place for recent settings: the newer takes it, the older browser is destroyed.
    await expect.poll(signatures, { timeout: 60_000 }).toEqual([defaultLaunchSignature, ownScreenGerman].sort());
    await expect.poll(() => isAlive(ownScreenOffer.pid as number), { timeout: 30_000, interval: 500 }).toBe(false);
    expect(t.stack.browserHost?.pool.warmCount).toBe(2);

    const sessionId = await t.createSession({ screen });
    const again = await t.start(sessionId);
    expect(again.warm).toBe(false);
    await t.stop(sessionId, again.id);
    await expect.poll(signatures, { timeout: 60_000 }).toEqual([defaultLaunchSignature, ownScreen].sort());
  }, 180_000);

  it('never warms for a session with a proxy (a warm browser has none)', async () => {
    const proxied = { width: 700, height: 500 };
    // Nothing listens there; the browser starts all the same, only its requests would fail.
    const sessionId = await t.createSession({ screen: proxied, proxy: { protocol: 'http', hostname: '127.0.0.1', port: 9 } });
    const started = await t.start(sessionId);
    expect(started.warm).toBe(false);
    await t.stop(sessionId, started.id);
    // A warm launch would have begun at once and been offered within a couple of seconds.
    await sleep(5000);
    expect(await signatures()).toEqual([defaultLaunchSignature, ownScreen].sort());
  }, 60_000);
});

describe('recently started settings', () => {
  let t: Awaited<ReturnType<typeof openStack>>;

  beforeAll(async () => {
    t = await openStack({ BROWSER_WARM_POOL: '1', BROWSER_WARM_RECENT: '2', BROWSER_WARM_RECENT_SECONDS: '4' });
  });
  afterAll(async () => {
    await t?.stack.close();
  });

  it('stop being kept warm once none started for BROWSER_WARM_RECENT_SECONDS; the default pool stays', async () => {
    await expect.poll(async () => (await t.offers()).length, { timeout: 60_000 }).toBe(1);
    const [defaultOffer] = await t.offers();
    const sessionId = await t.createSession({ screen });
    const started = await t.start(sessionId);
    expect(started.warm).toBe(false);
    await t.stop(sessionId, started.id);

    const offerOf = async () => (await t.offers()).find((offer) => offer.launchSignature === ownScreen);
    await expect.poll(async () => Boolean((await offerOf())?.pid), { timeout: 30_000, interval: 100 }).toBe(true);
    const pid = (await offerOf())?.pid as number;
    await expect.poll(offerOf, { timeout: 30_000, interval: 500 }).toBeUndefined();
    await expect.poll(() => isAlive(pid), { timeout: 30_000, interval: 500 }).toBe(false);
    expect((await t.offers()).map((offer) => offer.id)).toEqual([defaultOffer?.id]);
  }, 120_000);
});
