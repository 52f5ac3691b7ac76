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

export const browserRoutePaths: RawRoutePaths = { ...cookieCapturePaths, ...cdpProxyPaths, ...liveViewPaths };

/** Raw routes of running browsers: cookie capture, the CDP proxy and the live view. */
export async function registerBrowserRoutes(app: BrowserApp, deps: AppDeps) {
  await app.register(websocket, { options: { maxPayload: 256 * 1024 * 1024, perMessageDeflate: false } });
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
