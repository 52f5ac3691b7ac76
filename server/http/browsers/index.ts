import websocket from '@fastify/websocket';
import { rawRouteGroup } from '../rawRoute.ts';
import { cdpProxyRoute } from './cdpProxy.ts';
import { cookieCaptureRoute } from './cookieCapture.ts';
import { liveViewRoutes } from './liveView.ts';
import { activityRecorder, type BrowserScope } from './resources.ts';

/**
 * The largest frame a client may send: a CDP command carries at most a script, a page's content or
 * a fulfilled response's body (base64), so 32 MiB; the live view sets its own, smaller, limit.
 */
const CDP_MAX_FRAME_BYTES = 32 * 1024 * 1024;

/** Raw routes of running browsers: cookie capture, the CDP proxy and the live view. */
export const browserRoutes = rawRouteGroup(
  async (app, deps): Promise<BrowserScope> => {
    await app.register(websocket, { options: { maxPayload: CDP_MAX_FRAME_BYTES, perMessageDeflate: false } });
    // An open capture stream ends in preClose: the server's close waits for every open connection,
    // and a stream of a running browser would hold it until the browser stopped. WebSockets are
    // closed by @fastify/websocket's own preClose.
    const closing = new AbortController();
    app.addHook('preClose', (done) => {
      closing.abort();
      done();
    });
    return { deps, closing: closing.signal, touch: activityRecorder(deps) };
  },
  [cookieCaptureRoute, cdpProxyRoute, ...liveViewRoutes],
);
