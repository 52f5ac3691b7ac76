import { chromium, type Page } from 'playwright-core';
import { startTestSite } from './pages.ts';

/**
 * A site that remembers who logged in, in every place a browser keeps a site's state: a cookie
 * (read by the server), a localStorage value, an IndexedDB record, and a service worker it
 * registers. Its home page says what it finds of each (`#state`, JSON), so a test sees whether a
 * browser still knows the user after a stop and a start (test/browsers/persisted-profiles.test.ts).
 */
export async function startLoginSite() {
  const site = await startTestSite({
    '/login': (req, res) => {
      if (req.method === 'POST') {
        let data = '';
        req.on('data', (chunk) => {
          data += chunk;
        });
        req.on('end', () => {
          const user = new URLSearchParams(data).get('user') ?? '';
          res.setHeader('set-cookie', `sid=${encodeURIComponent(user)}-token; Path=/; Max-Age=86400; HttpOnly; SameSite=Lax`);
          res.setHeader('content-type', 'text/html; charset=utf-8');
          res.end(`<!doctype html><title>logging in</title><script>
            localStorage.setItem('user', ${JSON.stringify(user)});
            navigator.serviceWorker.register('/sw.js').then(() => {
              const open = indexedDB.open('site', 1);
              open.onupgradeneeded = () => open.result.createObjectStore('users');
              open.onsuccess = () => {
                const tx = open.result.transaction('users', 'readwrite');
                tx.objectStore('users').put(${JSON.stringify(user)}, 'current');
                tx.oncomplete = () => { document.title = 'logged in'; };
              };
            });
          </script>`);
        });
        return;
      }
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(
        '<!doctype html><title>log in</title><form method="post" action="/login"><input id="user" name="user"><button type="submit">Log in</button></form>',
      );
    },
    '/sw.js': (_req, res) => {
      res.setHeader('content-type', 'text/javascript');
      res.end("self.addEventListener('install', () => self.skipWaiting());");
    },
    '/home': (req, res) => {
      const sid = /(?:^|;\s*)sid=([^;]*)/.exec(req.headers.cookie ?? '')?.[1];
      const serverUser = sid ? decodeURIComponent(sid).replace(/-token$/, '') : null;
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(`<!doctype html><title>home</title><pre id="state"></pre><script>
        (async () => {
          const idb = await new Promise((resolve) => {
            const open = indexedDB.open('site');
            open.onupgradeneeded = () => open.transaction.abort();
            open.onerror = () => resolve(null);
            open.onsuccess = () => {
              if (!open.result.objectStoreNames.contains('users')) return resolve(null);
              const get = open.result.transaction('users').objectStore('users').get('current');
              get.onsuccess = () => resolve(get.result ?? null);
              get.onerror = () => resolve(null);
            };
          });
          const workers = (await navigator.serviceWorker.getRegistrations()).length;
          document.getElementById('state').textContent = JSON.stringify({
            server: ${JSON.stringify(serverUser)}, localStorage: localStorage.getItem('user'), indexedDB: idb, serviceWorkers: workers,
          });
        })();
      </script>`);
    },
  });

  /** Drives the browser behind `remoteUrl` (a session's CDP URL) in a new tab. */
  async function withPage<T>(remoteUrl: string, use: (page: Page) => Promise<T>) {
    const browser = await chromium.connectOverCDP(remoteUrl, { timeout: 30_000 });
    try {
      const tab = await browser.contexts()[0]!.newPage();
      try {
        return await use(tab);
      } finally {
        await tab.close().catch(() => {});
      }
    } finally {
      await browser.close();
    }
  }

  return {
    ...site,
    withPage,
    /** Logs `user` in through the form; answers once every kind of state is written. */
    logIn: (remoteUrl: string, user: string) =>
      withPage(remoteUrl, async (tab) => {
        await tab.goto(`${site.url}/login`);
        await tab.fill('#user', user);
        await tab.click('button[type=submit]');
        await tab.waitForFunction(() => document.title === 'logged in', undefined, { timeout: 20_000 });
      }),
    /** What the site finds of its user in the browser. */
    whoIsThere: (remoteUrl: string) =>
      withPage(remoteUrl, async (tab) => {
        await tab.goto(`${site.url}/home`);
        await tab.waitForFunction(() => document.getElementById('state')?.textContent, undefined, { timeout: 20_000 });
        return JSON.parse((await tab.textContent('#state')) ?? '{}') as {
          server: string | null;
          localStorage: string | null;
          indexedDB: string | null;
          serviceWorkers: number;
        };
      }),
  };
}
