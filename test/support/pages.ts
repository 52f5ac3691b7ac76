import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';

/**
 * Where the pages the service's browsers visit are served: an address of their own on loopback,
 * which the test stacks allow through the egress policy (`BROWSER_ALLOWED_PRIVATE_DESTINATIONS`);
 * everything else on loopback (the api, Temporal, other servers) stays out of the browsers' reach.
 */
export const PAGE_HOST = '127.0.0.5';

/**
 * Another site for the browsers (an IP address is a site of its own, whatever the port): a frame
 * from it in a page of PAGE_HOST runs in a renderer process of its own. A test that serves it adds
 * it to BROWSER_ALLOWED_PRIVATE_DESTINATIONS.
 */
export const OTHER_SITE_HOST = '127.0.0.6';

/** A small site served by the test itself, for browsers to visit (on PAGE_HOST unless `host` says). */
export async function startTestSite(
  routes: Record<string, (req: http.IncomingMessage, res: http.ServerResponse) => void> = {},
  host = PAGE_HOST,
) {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    const route = routes[req.url?.split('?')[0] ?? '/'];
    if (route) return route(req, res);
    if (req.url?.startsWith('/cookie')) {
      res.setHeader('set-cookie', 'visited=yes; Path=/; HttpOnly');
    }
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(
      `<!doctype html><title>Test page</title><h1 id="greeting">Hello from the test site</h1><script>console.log('page script ran at ' + location.pathname)</script>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    port,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * A forward HTTP proxy with Basic credentials: it answers 407 without them and relays plain
 * HTTP requests (absolute URIs) with them, noting each URL it relayed.
 */
export async function startAuthProxy(username: string, password: string) {
  const relayed: string[] = [];
  const expected = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const server = http.createServer((req, res) => {
    if (req.headers['proxy-authorization'] !== expected) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' });
      return res.end();
    }
    const target = new URL(req.url ?? '');
    relayed.push(target.toString());
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const upstream = http.request(
      { hostname: target.hostname, port: target.port, path: target.pathname + target.search, method: req.method, headers },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      },
    );
    upstream.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, PAGE_HOST, resolve));
  const { port } = server.address() as AddressInfo;
  return { host: PAGE_HOST, port, relayed, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Page script clicking a download link to `url` (saved as `filename`), as a page of the tenant's would. */
export async function clickDownloadLink(page: Page, url: string, filename: string) {
  await page.evaluate(
    ([href, name]) => {
      const link = document.createElement('a');
      link.href = href as string;
      link.download = name as string;
      document.body.append(link);
      link.click();
    },
    [url, filename],
  );
}
