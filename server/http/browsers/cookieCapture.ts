import type { FastifyReply, FastifyRequest } from 'fastify';
import { SessionResource } from '../../../db/entities/index.ts';
import type { AppDeps } from '../../appDeps.ts';
import { browserDialUrl } from '../../browsers/cdp/browserDial.ts';
import { CdpClient } from '../../browsers/cdp/cdpClient.ts';
import { Conflict, ServiceUnavailable } from '../../errors.ts';
import { openEventStream, wantsEventStream } from '../../eventStream.ts';
import { sessionActions } from '../../permissions/permissions.ts';
import { routesOf } from '../rawRoute.ts';
import { type BrowserScope, resourceForCaller, resourcePath } from './resources.ts';

/** Capture's own CDP connection: a browser that does not answer in this long is reported, not waited on. */
const CAPTURE_CONNECT_MS = 5_000;

/** Why a running browser's CDP endpoint failed us: it stopped meanwhile (409), or it is unwell (503). */
async function browserFailure(deps: AppDeps, resourceId: string, error: unknown) {
  const current = await deps.orm.em
    .fork()
    .findOne(SessionResource, { id: resourceId }, { fields: ['status'] })
    .catch(() => null);
  if (current && current.status !== 'running') return new Conflict('browser_not_running', 'The browser is not running');
  return new ServiceUnavailable('The browser did not answer', error);
}

/** A running browser's cookies, for callers with cookies.read: a snapshot, or a stream of changes until the app closes. */
export const cookieCaptureRoute = routesOf<BrowserScope>()({
  method: 'GET',
  path: `${resourcePath}/capture`,
  doc: {
    operationId: 'sessions-capture',
    summary: "The running browser's cookies: a JSON snapshot, or SSE (event `cookies` on every change); needs cookies.read",
    tags: ['sessions'],
    responses: {
      '200': { description: '{cookies: [...]} or text/event-stream' },
      '409': { description: 'The browser is not running (starting, stopping or stopped), or stopped meanwhile' },
      '503': { description: 'The browser did not answer' },
    },
  },
  serve:
    ({ deps, closing }) =>
    async (req, reply) => {
      const { resource, em } = await resourceForCaller(deps, req, req.params, [sessionActions.read, sessionActions.readCookies]);
      if (resource.status !== 'running' || !resource.cdpEndpoint) throw new Conflict('browser_not_running', 'The browser is not running');
      const browserUrl = await browserDialUrl(deps, em, resource);
      // The browser may die between the status read and these calls: a stopped one is a 409, never a 500.
      const cdp = await CdpClient.connect(browserUrl, CAPTURE_CONNECT_MS).catch(async (error) => {
        throw await browserFailure(deps, resource.id, error);
      });
      const readCookies = async () => (await cdp.send<{ cookies: unknown[] }>('Storage.getCookies')).cookies;
      if (!wantsEventStream(req)) {
        try {
          const cookies = await readCookies().catch(async (error) => {
            throw await browserFailure(deps, resource.id, error);
          });
          return reply.send({ cookies });
        } finally {
          cdp.close();
        }
      }
      return streamCookies(req, reply, cdp, readCookies, closing);
    },
});

/**
 * SSE of the browser's cookies: the whole jar now, then again whenever it changes. `closing`
 * (the server shutting down) ends it without the `end` event: the browser did not stop.
 */
function streamCookies(
  req: FastifyRequest,
  reply: FastifyReply,
  cdp: CdpClient,
  readCookies: () => Promise<unknown[]>,
  closing: AbortSignal,
) {
  const raw = openEventStream(reply);
  let last = '';
  let seq = 0;
  let closed = false;
  const close = (ended = true) => {
    if (closed) return;
    closed = true;
    clearInterval(timer);
    closing.removeEventListener('abort', shutDown);
    cdp.close();
    if (ended) raw.write('event: end\ndata: {}\n\n');
    raw.end();
  };
  const shutDown = () => close(false);
  const poll = async () => {
    const cookies = await readCookies();
    const serialized = JSON.stringify(cookies);
    if (serialized !== last && !closed) {
      last = serialized;
      raw.write(`id: ${++seq}\nevent: cookies\ndata: ${JSON.stringify({ cookies })}\n\n`);
    }
  };
  const timer = setInterval(() => {
    poll().catch(() => close());
  }, 1_000);
  cdp.on('close', () => close());
  req.raw.on('close', () => close());
  if (closing.aborted) return shutDown();
  closing.addEventListener('abort', shutDown, { once: true });
  poll().catch(() => close());
}
