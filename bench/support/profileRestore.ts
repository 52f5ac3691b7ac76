import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium } from 'playwright-core';
import { SessionResource, StoredBlob } from '../../db/entities/index.ts';
import { profileKey } from '../../server/browsers/sessions/sessionProfiles.ts';
import { BENCH_PAGE_HOST, percentile, type startBenchStack } from './stack.ts';

/**
 * `bench:browser-start`'s profile restore variant (docs/sessions-and-proxies.md, Profiles that
 * persist): start → usable of a persisted session whose profile is restored, beside a fresh cold
 * start of a session with the same settings, interleaved in the same run. Both launch cold (a
 * persisted session never takes a warm browser). The profile is a site's login: a cookie, a
 * localStorage value, an IndexedDB record and a service worker.
 */

/** The issue's bar: a restored profile costs at most this much at start → usable. */
export const PROFILE_GOAL_RATIO = 1.1;

type Stack = Awaited<ReturnType<typeof startBenchStack>>;

const loginPage = `<!doctype html><title>login</title><script>
document.cookie = 'sid=bench-user; Max-Age=86400; Path=/';
localStorage.setItem('user', 'bench-user');
navigator.serviceWorker.register('/sw.js').then(() => {
  const open = indexedDB.open('site', 1);
  open.onupgradeneeded = () => open.result.createObjectStore('users');
  open.onsuccess = () => {
    const tx = open.result.transaction('users', 'readwrite');
    tx.objectStore('users').put('bench-user', 'current');
    tx.oncomplete = () => { document.title = 'logged in'; };
  };
});
</script>`;
const homePage = '<!doctype html><title>home</title><script>document.title = localStorage.getItem("user") ?? "nobody";</script>';

export async function measureProfileRestore(stack: Stack, runs: number) {
  const site = http.createServer((req, res) => {
    res.setHeader('content-type', req.url === '/sw.js' ? 'text/javascript' : 'text/html');
    res.end(req.url === '/sw.js' ? '' : req.url === '/login' ? loginPage : homePage);
  });
  await new Promise<void>((resolve) => site.listen(0, BENCH_PAGE_HOST, resolve));
  const siteUrl = `http://${BENCH_PAGE_HOST}:${(site.address() as { port: number }).port}`;
  const sessions = `/${stack.slug}/api/sessions`;
  const screen = { width: 1282, height: 720 };
  try {
    const fresh = (await stack.call('PUT', sessions, stack.token, { name: 'fresh', screen })).id as string;
    const persisted = (await stack.call('PUT', sessions, stack.token, { name: 'persisted', screen, persist: true })).id as string;

    const stopped = async (resourceId: string) => {
      while ((await stack.orm.em.fork().findOne(SessionResource, { id: resourceId }, { fields: ['status'] }))?.status !== 'stopped')
        await sleep(20);
    };
    /** One start: until CDP is usable, then until the site's page has loaded (and read its state); then stopped, and the teardown timed. */
    const round = async (sessionId: string) => {
      const t0 = performance.now();
      const resource = await stack.call('POST', `${sessions}/${sessionId}/start`, stack.token);
      const browser = await chromium.connectOverCDP(resource.remoteUrl);
      const usable = performance.now() - t0;
      const context = browser.contexts()[0];
      const page = context?.pages()[0] ?? (await context?.newPage());
      await page?.goto(`${siteUrl}/home`);
      const user = await page?.title();
      const loaded = performance.now() - t0;
      await browser.close();
      const s0 = performance.now();
      await stack.call('POST', `${sessions}/${sessionId}/${resource.id}/stop`, stack.token);
      await stopped(resource.id);
      return { usable, loaded, teardown: performance.now() - s0, user };
    };

    // The profile: a login on the site, saved at the stop.
    const first = await stack.call('POST', `${sessions}/${persisted}/start`, stack.token);
    const browser = await chromium.connectOverCDP(first.remoteUrl);
    const page = await browser.contexts()[0]!.newPage();
    await page.goto(`${siteUrl}/login`);
    await page.waitForFunction(() => document.title === 'logged in');
    await browser.close();
    await stack.call('POST', `${sessions}/${persisted}/${first.id}/stop`, stack.token);
    await stopped(first.id);
    const saved = await stack.orm.em.fork().findOne(StoredBlob, { key: profileKey(persisted) }, { fields: ['key', 'bytes'] });

    const results = { fresh: [] as Awaited<ReturnType<typeof round>>[], restored: [] as Awaited<ReturnType<typeof round>>[] };
    let forgotten = 0;
    for (let i = 0; i < runs; i++) {
      // Alternated, so that a slower stretch of the machine falls on both alike.
      const order = i % 2 === 0 ? (['fresh', 'restored'] as const) : (['restored', 'fresh'] as const);
      for (const kind of order) {
        const result = await round(kind === 'fresh' ? fresh : persisted);
        if (kind === 'restored' && result.user !== 'bench-user') forgotten++;
        results[kind].push(result);
      }
      if ((i + 1) % 5 === 0) console.log(`bench: profile restore ${i + 1}/${runs} rounds`);
    }

    const median = (values: number[]) => percentile(values, 50);
    const pick = (kind: 'fresh' | 'restored', key: 'usable' | 'loaded' | 'teardown') => results[kind].map((result) => result[key]);
    const row = (name: string, values: number[]) =>
      `| ${name} | ${values.length} | ${percentile(values, 50).toFixed(0)} | ${percentile(values, 95).toFixed(0)} |`;
    const ratio = median(pick('restored', 'usable')) / median(pick('fresh', 'usable'));
    const met = ratio <= PROFILE_GOAL_RATIO;
    return `## Profile restore (persisted sessions)

Reproduce: \`npm run bench:browser-start\` (this section alone: \`BENCH_ONLY=profile npm run bench:browser-start\`;
BENCH_PROFILE_RUNS to change the count, ${runs} here).

A session with \`persist: true\` whose saved profile (a site's login: a cookie, a localStorage value, an
IndexedDB record and a service worker; ${saved ? `${saved.bytes} bytes sealed` : 'not found'} in the blob
store) is read, unpacked into the new profile before Chromium starts, and checked by the page
(its title is the stored user), against a fresh cold start of a session with the same settings and
no \`persist\`, alternated in the same run. Both launch cold: a persisted session never takes a warm
browser. "Usable" as above (start answered and \`connectOverCDP\` done); "site loaded": the site's
page loaded in the browser's first tab. The teardown includes the save (cookies read, Chromium's
close, the archive packed, sealed and stored).

| goal | target | restored (median) | fresh (median, same run) | |
|---|---|---|---|---|
| start → CDP usable, persisted with its profile restored | ≤ ${PROFILE_GOAL_RATIO} × fresh | ${median(pick('restored', 'usable')).toFixed(0)} ms (${(ratio * 100).toFixed(0)} %) | ${median(pick('fresh', 'usable')).toFixed(0)} ms | ${met ? 'met' : '**not met**'} |

| measure | runs | median ms | p95 ms |
|---|---|---|---|
${row('start → CDP usable, fresh (cold, no persist)', pick('fresh', 'usable'))}
${row('start → CDP usable, persisted, profile restored', pick('restored', 'usable'))}
${row('start → site page loaded, fresh', pick('fresh', 'loaded'))}
${row('start → site page loaded, persisted, profile restored', pick('restored', 'loaded'))}
${row('POST stop → stopped, fresh', pick('fresh', 'teardown'))}
${row('POST stop → stopped, persisted (profile saved)', pick('restored', 'teardown'))}

Restored starts whose page did not find the user: ${forgotten} of ${runs}.
`;
  } finally {
    site.close();
  }
}
