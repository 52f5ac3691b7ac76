import websocket from '@fastify/websocket';
import type { FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { Logger } from 'pino';
import type { AppDeps } from '../../appDeps.ts';
import type { RawRoutePaths } from '../openapi.ts';
import { cdpProxyPaths, registerCdpProxy } from './cdpProxy.ts';
import { cookieCapturePaths, registerCookieCapture } from './cookieCapture.ts';
import { liveViewPaths, registerLiveView } from './liveView.ts';
import { activityRecorder } from './resources.ts';

export type BrowserApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, Logger>;

/**
 * The largest frame a client may send: a CDP command carries at most a script, a page's content or
 * a fulfilled response's body (base64), so 32 MiB; the live view sets its own, smaller, limit.
 */
const CDP_MAX_FRAME_BYTES = 32 * 1024 * 1024;

export const browserRoutePaths: RawRoutePaths = { ...cookieCapturePaths, ...cdpProxyPaths, ...liveViewPaths };

/** Raw routes of running browsers: cookie capture, the CDP proxy and the live view. */
export async function registerBrowserRoutes(app: BrowserApp, deps: AppDeps) {
  await app.register(websocket, { options: { maxPayload: CDP_MAX_FRAME_BYTES, perMessageDeflate: false } });
  // An open capture stream ends in preClose: the server's close waits for every open connection,
  // and a stream of a running browser would hold it until the browser stopped. WebSockets are
  // closed by @fastify/websocket's own preClose.
  const closing = new AbortController();
  app.addHook('preClose', (done) => {
    closing.abort();
    done();
  });
  const touch = activityRecorder(deps);
  registerCookieCapture(app, deps, closing.signal);
  registerCdpProxy(app, deps, touch);
  registerLiveView(app, deps, touch);
}
