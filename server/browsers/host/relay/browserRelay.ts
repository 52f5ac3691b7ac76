import http, { STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { type ErrorBody, errorBody } from '../../../errors.ts';
import type { RelayTokens } from '../../tokens/relayTokens.ts';

/**
 * The relay of a browser host: the only way in to its browsers, whose DevTools connections are
 * pipes served at Unix sockets only the host can open (server/browsers/host/relay/cdpMux.ts). It listens on BROWSER_HOST_ADDRESS:BROWSER_RELAY_PORT and forwards a
 * WebSocket at `/resources/<resourceId>?token=…` to the DevTools endpoint of that resource's
 * browser, byte for byte once the handshake is through. The api's CDP proxy (with its guard), live
 * view, cookie capture and warm-start cookies all come this way (server/browsers/cdp/browserDial.ts).
 *
 * Refused before any byte reaches a browser, with the API's error body: a missing, forged or
 * expired token, or one minted for another resource or host (401); a resource that is not active
 * on this host or whose endpoint is none of this host's browsers (403).
 */

const RESOURCE_PATH = /^\/resources\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/** A browser that does not complete the handshake in this long is reported, not waited on. */
const UPSTREAM_HANDSHAKE_MS = 10_000;

/** Handshake headers passed on to Chromium; nothing else (cookies, Origin, forwarding headers) is its business. */
const HANDSHAKE_HEADERS = ['sec-websocket-key', 'sec-websocket-version', 'sec-websocket-extensions', 'sec-websocket-protocol'];

export type RelayOptions = {
  address: string;
  port: number;
  hostId: string;
  tokens: RelayTokens;
  /**
   * The DevTools endpoint of the resource's browser on this host, or null when the resource is not
   * active here or its endpoint is none of this host's own browsers.
   */
  endpointOf: (resourceId: string) => Promise<string | null>;
  log: Logger;
};

export async function startBrowserRelay(options: RelayOptions) {
  const { tokens, hostId, log } = options;
  const server = http.createServer((req, res) => {
    const known = RESOURCE_PATH.test(new URL(req.url ?? '/', 'http://relay').pathname);
    const [status, body] = known
      ? [400, errorBody('websocket_required', 'The browser relay speaks WebSocket (the Chrome DevTools Protocol)')]
      : [404, errorBody('not_found', 'Not found')];
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
  });
  const open = new Set<Duplex>();

  server.on('upgrade', (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    relay(req, client, head).catch((error: unknown) => {
      log.warn({ err: error }, 'browser relay: could not look up a resource');
      refuse(client, 503, errorBody('service_unavailable', 'The browser host could not check the resource; try again'));
    });
  });

  async function relay(req: http.IncomingMessage, client: Duplex, head: Buffer) {
    const url = new URL(req.url ?? '/', 'http://relay');
    const resourceId = RESOURCE_PATH.exec(url.pathname)?.[1]?.toLowerCase();
    if (!resourceId) return refuse(client, 404, errorBody('not_found', 'Not found'));
    if (req.headers.upgrade?.toLowerCase() !== 'websocket') {
      return refuse(client, 400, errorBody('websocket_required', 'The browser relay speaks WebSocket'));
    }
    const refusal = tokens.check(url.searchParams.get('token'), resourceId, hostId);
    if (refusal) {
      const message = {
        missing: 'A relay token is required',
        invalid: 'The relay token is invalid',
        expired: 'The relay token has expired',
      };
      return refuse(client, 401, errorBody('invalid_token', message[refusal]));
    }
    const endpoint = await options.endpointOf(resourceId);
    if (client.destroyed) return;
    if (!endpoint) return refuse(client, 403, errorBody('forbidden', 'This resource has no browser running on this host'));
    forward(req, client, head, endpoint);
  }

  /** Replays the client's handshake to the browser; on its 101, passes the answer back and pipes both ways. */
  function forward(req: http.IncomingMessage, client: Duplex, head: Buffer, endpoint: string) {
    const target = upstreamTarget(endpoint);
    const headers: Record<string, string> = { host: target.host, connection: 'Upgrade', upgrade: 'websocket' };
    for (const name of HANDSHAKE_HEADERS) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const upstreamRequest = http.request({ ...target.connect, headers, timeout: UPSTREAM_HANDSHAKE_MS });
    const unavailable = () => refuse(client, 503, errorBody('service_unavailable', 'The browser did not accept the connection'));
    upstreamRequest.on('timeout', () => upstreamRequest.destroy(new Error('the browser did not answer the handshake')));
    upstreamRequest.on('error', unavailable);
    upstreamRequest.on('response', (res) => {
      res.resume();
      unavailable();
    });
    upstreamRequest.on('upgrade', (res, upstream: Duplex, upstreamHead: Buffer) => {
      upstreamRequest.setTimeout(0);
      if (client.destroyed) return upstream.destroy();
      const lines = ['HTTP/1.1 101 Switching Protocols'];
      for (let i = 0; i < res.rawHeaders.length; i += 2) lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
      client.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (upstreamHead.length) client.write(upstreamHead);
      if (head.length) upstream.write(head);
      open.add(upstream);
      const close = () => {
        client.destroy();
        upstream.destroy();
        open.delete(upstream);
      };
      for (const side of [client, upstream]) {
        side.on('error', close);
        side.on('close', close);
      }
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstreamRequest.end();
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.address, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  log.info(`browser relay listening on ${options.address}:${port}`);

  return {
    /** The port bound: BROWSER_RELAY_PORT, or the free one taken for 0. */
    port,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of open) socket.destroy();
      server.closeAllConnections();
      await closed;
    },
  };
}

/**
 * Where a browser's DevTools connection is: the Unix socket of its CDP pipe on this host
 * (`ws+unix://<socket>:<path>`, server/browsers/host/relay/cdpMux.ts), or a ws:// URL (a browser running
 * elsewhere, taken over as an external session).
 */
function upstreamTarget(endpoint: string): { host: string; connect: http.RequestOptions } {
  if (endpoint.startsWith('ws+unix://')) {
    const rest = endpoint.slice('ws+unix://'.length);
    const split = rest.lastIndexOf(':');
    return { host: 'localhost', connect: { socketPath: rest.slice(0, split), path: rest.slice(split + 1) } };
  }
  const url = new URL(endpoint);
  return { host: url.host, connect: { host: url.hostname, port: url.port, path: url.pathname + url.search } };
}

/** An HTTP answer on a socket that asked to upgrade, then the socket closed: no WebSocket is ever opened. */
function refuse(socket: Duplex, status: number, body: ErrorBody) {
  if (socket.destroyed) return;
  const json = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
  );
}
