import WebSocket from 'ws';
import type { AppDeps } from '../../appDeps.ts';
import { BadRequest } from '../../errors.ts';
import { routesOf } from '../rawRoute.ts';
import { guardCdpMessage } from './cdpGuard.ts';
import { type BrowserScope, browserByToken, resourcePath, tokenParam } from './resources.ts';

/** What a request's token opened, from its upgrade check to its socket. */
const verified = new WeakMap<object, Awaited<ReturnType<typeof browserByToken>>>();

export const cdpProxyRoute = routesOf<BrowserScope>()({
  method: 'GET',
  path: `${resourcePath}/cdp`,
  doc: {
    operationId: 'sessions-cdp',
    summary: 'Chrome DevTools Protocol WebSocket (remoteUrl), for Playwright connectOverCDP and Puppeteer connect',
    tags: ['sessions'],
    parameters: [tokenParam],
    responses: { '101': { description: 'WebSocket upgrade' } },
  },
  serve: ({ deps, touch }) => ({
    handler: async () => {
      throw new BadRequest('websocket_required', 'This endpoint speaks WebSocket (the Chrome DevTools Protocol)');
    },
    // The token is checked before the upgrade: a refused client gets an HTTP answer (401, 404)
    // and never a socket, so nothing it sends is read, let alone held.
    preValidation: async (req) => {
      verified.set(req, await browserByToken(deps, req.params, req.query, 'cdp'));
    },
    wsHandler: (client, req) => {
      const target = verified.get(req);
      verified.delete(req);
      if (!target) return client.close(4001, 'not authorised');
      proxyCdp(client, target.browserUrl, (force) => touch(target.resource.id, force), deps);
    },
  }),
});

/**
 * Pipes a client WebSocket to the browser, through its host's relay (`browserUrl`). Client
 * messages pass `guardCdpMessage` (a refused one is answered here and never reaches the browser)
 * and wait in order until the browser side is open; either side closing closes the other.
 */
function proxyCdp(client: WebSocket, browserUrl: string, touch: (force?: boolean) => void, deps: AppDeps) {
  const queued: { data: WebSocket.RawData; isBinary: boolean }[] = [];
  const upstream = new WebSocket(browserUrl, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
  // The relay refusing the api (a relay secret that differs between api and host) is an operator's matter.
  upstream.on('unexpected-response', (_req, res) => {
    deps.log.warn({ status: res.statusCode }, 'the browser relay refused the CDP proxy');
    res.resume();
    closeBoth();
  });
  const toBrowser = (data: WebSocket.RawData) => {
    const verdict = guardCdpMessage(String(data));
    if ('refuse' in verdict) {
      if (client.readyState === WebSocket.OPEN) client.send(verdict.reply);
    } else {
      upstream.send(verdict.forward);
    }
  };
  touch();
  client.on('message', (data, isBinary) => {
    touch();
    if (upstream.readyState === WebSocket.OPEN) toBrowser(data);
    else queued.push({ data, isBinary });
  });
  upstream.on('open', () => {
    for (const { data } of queued.splice(0)) toBrowser(data);
  });
  upstream.on('message', (data, isBinary) => {
    if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary });
  });
  let closed = false;
  const closeBoth = () => {
    if (client.readyState === WebSocket.OPEN || client.readyState === WebSocket.CONNECTING) client.close();
    if (upstream.readyState === WebSocket.OPEN || upstream.readyState === WebSocket.CONNECTING) upstream.terminate();
    if (!closed) touch(true);
    closed = true;
  };
  client.on('close', closeBoth);
  client.on('error', closeBoth);
  upstream.on('close', closeBoth);
  upstream.on('error', closeBoth);
}
