import websocket from '@fastify/websocket';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { Logger } from 'pino';
import WebSocket from 'ws';
import { z } from 'zod';
import { PipelineRun, SessionResource } from '../../db/entities/index.ts';
import type { AppDeps } from '../appDeps.ts';
import { CdpClient } from '../browsers/cdpClient.ts';
import { guardCdpMessage } from '../browsers/cdpGuard.ts';
import { liveViewHtml } from '../browsers/liveViewPage.ts';
import type { ResourceTokenUse } from '../browsers/resourceTokens.ts';
import { BadRequest, Conflict, NotFound, ServiceUnavailable, Unauthenticated } from '../errors.ts';
import { LogNotifications } from '../logs/logNotifications.ts';
import { serveLogs, wantsEventStream } from '../logs/logResponses.ts';
import { logStreams } from '../logs/logWriter.ts';
import { pipelineActions, sessionActions } from '../permissions/permissions.ts';
import { isUuid } from '../projects/projectRepository.ts';
import { rawRoutePaths } from './openapi.ts';
import { projectRequest } from './projectRequest.ts';

type ResourceParams = { project: string; sessionId: string; resourceId: string };

const base = '/:project/api/sessions/:sessionId/:resourceId';
const docBase = '/{project}/api/sessions/{sessionId}/{resourceId}';
const pathParams = ['project', 'sessionId', 'resourceId'].map((name) => ({
  name,
  in: 'path' as const,
  required: true,
  schema: { type: 'string' as const },
}));
const tokenParam = {
  name: 'token',
  in: 'query' as const,
  required: true,
  schema: { type: 'string' as const },
  description: 'the token inside remoteUrl / vncUrl',
};

/** What both log routes take besides their path: paging for JSON, Accept and Last-Event-ID for SSE. */
const logParams = [
  { name: 'offset', in: 'query' as const, schema: { type: 'integer' as const, minimum: 0 } },
  { name: 'limit', in: 'query' as const, schema: { type: 'integer' as const, minimum: 1, maximum: 200 } },
  {
    name: 'Accept',
    in: 'header' as const,
    schema: { type: 'string' as const, enum: ['application/json', 'text/event-stream'] },
    description: 'text/event-stream for a live stream instead of a page of JSON',
  },
  {
    name: 'Last-Event-ID',
    in: 'header' as const,
    schema: { type: 'string' as const },
    description: 'SSE: resume after this entry',
  },
];

Object.assign(rawRoutePaths, {
  [`${docBase}/logs`]: {
    get: {
      summary:
        'Browser logs (console, navigations, lifecycle, errors): paged JSON, or SSE with Accept: text/event-stream (resumable with Last-Event-ID)',
      tags: ['sessions'],
      parameters: [...pathParams, ...logParams],
      responses: { '200': { description: 'JSON array of {seq, context, severity, message, area, object, created}, or text/event-stream' } },
    },
  },
  '/{project}/api/pipelines/{pipelineId}/{runId}/logs': {
    get: {
      summary: 'Run logs with secrets redacted: paged JSON, or SSE with Accept: text/event-stream (resumable with Last-Event-ID)',
      tags: ['pipelines'],
      parameters: [
        ...['project', 'pipelineId', 'runId'].map((name) => ({
          name,
          in: 'path' as const,
          required: true,
          schema: { type: 'string' as const },
        })),
        ...logParams,
      ],
      responses: { '200': { description: 'JSON array of log entries, or text/event-stream' } },
    },
  },
  [`${docBase}/capture`]: {
    get: {
      summary: "The running browser's cookies: a JSON snapshot, or SSE (event `cookies` on every change); needs cookies.read",
      tags: ['sessions'],
      parameters: pathParams,
      responses: { '200': { description: '{cookies: [...]} or text/event-stream' } },
    },
  },
  [`${docBase}/cdp`]: {
    get: {
      summary: 'Chrome DevTools Protocol WebSocket (remoteUrl), for Playwright connectOverCDP and Puppeteer connect',
      tags: ['sessions'],
      parameters: [...pathParams, tokenParam],
      responses: { '101': { description: 'WebSocket upgrade' } },
    },
  },
  [`${docBase}/live`]: {
    get: {
      summary: 'Live view page (vncUrl)',
      tags: ['sessions'],
      parameters: [...pathParams, tokenParam],
      responses: { '200': { description: 'HTML' } },
    },
  },
  [`${docBase}/live/ws`]: {
    get: {
      summary: 'Live view WebSocket: screencast frames out, mouse/keyboard/wheel input in',
      tags: ['sessions'],
      parameters: [...pathParams, tokenParam],
      responses: { '101': { description: 'WebSocket upgrade' } },
    },
  },
});

const tokenQuery = z.object({ token: z.string().min(1).max(2000) });
/** At most one `lastActivity` write per resource this often (a busy live view sends many events). */
const ACTIVITY_TOUCH_MS = 10_000;
/** Live-view input events are a few hundred bytes; nothing bigger is read into memory. */
const LIVE_MAX_PAYLOAD = 64 * 1024;
/** Capture's own CDP connection: a browser that does not answer in this long is reported, not waited on. */
const CAPTURE_CONNECT_MS = 5_000;

/** Raw routes of running browsers: CDP proxy, live view, logs and cookie capture. */
export async function registerBrowserRoutes(
  app: FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, Logger>,
  deps: AppDeps,
) {
  await app.register(websocket, { options: { maxPayload: 256 * 1024 * 1024, perMessageDeflate: false } });
  const notifications = new LogNotifications(deps.orm.config.get('clientUrl') as string, deps.log);
  // Open SSE streams end in preClose: the server's close waits for every open connection, and a
  // stream of a running browser would hold it until the browser stopped. Their clients reconnect
  // (to another replica) with Last-Event-ID. WebSockets are closed by @fastify/websocket's own preClose.
  const closing = new AbortController();
  app.addHook('preClose', (done) => {
    closing.abort();
    done();
  });
  app.addHook('onClose', () => notifications.close());

  /** Resource by ids, for the token routes: the token is the credential. */
  async function resourceByToken(params: ResourceParams, query: unknown, use: ResourceTokenUse) {
    const parsed = tokenQuery.safeParse(query);
    if (!parsed.success || !isUuid(params.resourceId) || !isUuid(params.sessionId))
      throw new Unauthenticated('A valid token is required', 'invalid_token');
    const grant = await deps.resourceTokens.verify(parsed.data.token, params.resourceId.toLowerCase(), use);
    if (!grant) throw new Unauthenticated('The token is invalid or expired', 'invalid_token');
    const em = deps.orm.em.fork();
    const resource = await em.findOne(
      SessionResource,
      { id: params.resourceId.toLowerCase(), session: params.sessionId.toLowerCase() },
      { populate: ['cdpEndpoint', 'project'] },
    );
    if (!resource || (resource.project.slug !== params.project.toLowerCase() && resource.project.id !== params.project.toLowerCase())) {
      throw new NotFound('Resource');
    }
    if (resource.status !== 'running' || !resource.cdpEndpoint) throw new NotFound('Running browser', 'browser_not_running');
    return { em, resource, cdpEndpoint: resource.cdpEndpoint, grant };
  }

  /** Resource by ids, for the API-credential routes (logs, capture). */
  async function resourceForCaller(req: FastifyRequest, params: ResourceParams, actions: string[]) {
    const ctx = await projectRequest(deps, req, params.project);
    if (!isUuid(params.sessionId) || !isUuid(params.resourceId)) throw new NotFound('Resource');
    for (const action of actions) ctx.authorize(action, params.sessionId.toLowerCase());
    const resource = await ctx.em.findOne(
      SessionResource,
      { id: params.resourceId.toLowerCase(), session: params.sessionId.toLowerCase(), project: ctx.project.id },
      { populate: ['cdpEndpoint'] },
    );
    if (!resource) throw new NotFound('Resource');
    return { ...ctx, resource };
  }

  // Shared by every connection to a resource, so many viewers or clients still write once per
  // interval; kept below the idle timeout so a browser in use is never taken for idle.
  const touchEvery = Math.min(ACTIVITY_TOUCH_MS, (deps.config.browsers.idleTimeoutSeconds * 1000) / 3);
  const lastTouch = new Map<string, number>();
  /** Records use of the resource; `force` for the last word of a closing connection. */
  const touch = (resourceId: string, force = false) => {
    const now = Date.now();
    if (!force && now - (lastTouch.get(resourceId) ?? 0) < touchEvery) return;
    lastTouch.set(resourceId, now);
    if (lastTouch.size > 10_000) {
      for (const [id, at] of lastTouch) if (now - at >= touchEvery) lastTouch.delete(id);
    }
    void deps.orm.em
      .fork()
      .nativeUpdate(SessionResource, { id: resourceId }, { lastActivity: new Date() })
      .catch(() => {});
  };

  /** Why a running browser's CDP endpoint failed us: it stopped meanwhile (409), or it is unwell (503). */
  async function browserFailure(resourceId: string, error: unknown) {
    const current = await deps.orm.em
      .fork()
      .findOne(SessionResource, { id: resourceId }, { fields: ['status'] })
      .catch(() => null);
    if (current && current.status !== 'running') return new Conflict('browser_not_running', 'The browser is not running');
    return new ServiceUnavailable('The browser did not answer', error);
  }

  app.get<{ Params: ResourceParams }>(`${base}/logs`, async (req, reply) => {
    const { em, resource } = await resourceForCaller(req, req.params, [sessionActions.read]);
    return serveLogs(req, reply, {
      em,
      notifications,
      closing: closing.signal,
      stream: logStreams.resource(resource.id),
      isFinished: async () => {
        const current = await deps.orm.em.fork().findOne(SessionResource, { id: resource.id }, { fields: ['status'] });
        return !current || current.status === 'stopped' || current.status === 'failed';
      },
    });
  });

  app.get<{ Params: { project: string; pipelineId: string; runId: string } }>(
    '/:project/api/pipelines/:pipelineId/:runId/logs',
    async (req, reply) => {
      const ctx = await projectRequest(deps, req, req.params.project);
      const { pipelineId, runId } = req.params;
      if (!isUuid(pipelineId) || !isUuid(runId)) throw new NotFound('Run');
      ctx.authorize(pipelineActions.read, pipelineId.toLowerCase());
      const run = await ctx.em.findOne(PipelineRun, {
        id: runId.toLowerCase(),
        pipeline: pipelineId.toLowerCase(),
        project: ctx.project.id,
      });
      if (!run) throw new NotFound('Run');
      return serveLogs(req, reply, {
        em: ctx.em,
        notifications,
        closing: closing.signal,
        stream: logStreams.run(run.id),
        isFinished: async () => {
          const current = await deps.orm.em.fork().findOne(PipelineRun, { id: run.id }, { fields: ['status'] });
          return !current || !['queued', 'running'].includes(current.status);
        },
      });
    },
  );

  app.get<{ Params: ResourceParams }>(`${base}/capture`, async (req, reply) => {
    const { resource } = await resourceForCaller(req, req.params, [sessionActions.read, sessionActions.readCookies]);
    if (resource.status !== 'running' || !resource.cdpEndpoint) throw new Conflict('browser_not_running', 'The browser is not running');
    // The browser may die between the status read and these calls: a stopped one is a 409, never a 500.
    const cdp = await CdpClient.connect(resource.cdpEndpoint, CAPTURE_CONNECT_MS).catch(async (error) => {
      throw await browserFailure(resource.id, error);
    });
    const readCookies = async () => (await cdp.send<{ cookies: unknown[] }>('Storage.getCookies')).cookies;
    if (!wantsEventStream(req)) {
      try {
        const cookies = await readCookies().catch(async (error) => {
          throw await browserFailure(resource.id, error);
        });
        return reply.send({ cookies });
      } finally {
        cdp.close();
      }
    }
    return streamCookies(req, reply, cdp, readCookies, closing.signal);
  });

  app.get<{ Params: ResourceParams; Querystring: { token?: string } }>(`${base}/live`, async (req, reply) => {
    await resourceByToken(req.params, req.query, 'live');
    return reply
      .type('text/html; charset=utf-8')
      .header(
        'content-security-policy',
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'",
      )
      .header('referrer-policy', 'no-referrer')
      .send(liveViewHtml());
  });

  app.route<{ Params: ResourceParams }>({
    method: 'GET',
    url: `${base}/cdp`,
    handler: async () => {
      throw new BadRequest('websocket_required', 'This endpoint speaks WebSocket (the Chrome DevTools Protocol)');
    },
    wsHandler: (client, req) => {
      // A CDP client speaks as soon as the socket opens (Playwright sends Browser.getVersion at
      // once): hold its messages from the first moment, while the token is still being checked.
      const early: { data: WebSocket.RawData; isBinary: boolean }[] = [];
      const hold = (data: WebSocket.RawData, isBinary: boolean) => early.push({ data, isBinary });
      client.on('message', hold);
      resourceByToken(req.params, req.query, 'cdp').then(
        ({ resource, cdpEndpoint }) => {
          client.off('message', hold);
          // The client may have left while the token was checked: open nothing for it.
          if (client.readyState !== WebSocket.OPEN) return;
          proxyCdp(client, cdpEndpoint, (force) => touch(resource.id, force), early);
        },
        (error: Error) => client.close(4001, error.message.slice(0, 120)),
      );
    },
  });

  app.route<{ Params: ResourceParams }>({
    method: 'GET',
    url: `${base}/live/ws`,
    handler: async () => {
      throw new BadRequest('websocket_required', 'This endpoint speaks WebSocket');
    },
    wsHandler: (client, req) => {
      limitPayload(client, LIVE_MAX_PAYLOAD);
      resourceByToken(req.params, req.query, 'live').then(
        ({ resource, cdpEndpoint, grant }) => {
          if (client.readyState !== WebSocket.OPEN) return;
          void serveLiveView(client, cdpEndpoint, { control: grant.control, touch: (force) => touch(resource.id, force) }, deps);
        },
        (error: Error) => client.close(4001, error.message.slice(0, 120)),
      );
    },
  });
}

/**
 * `ws` has no per-route maxPayload; the server's is sized for CDP (scripts, request bodies). The
 * receiver's limit is what closes an oversized frame (1009) before it is buffered.
 */
function limitPayload(client: WebSocket, bytes: number) {
  const receiver = (client as unknown as { _receiver?: { _maxPayload?: number } })._receiver;
  if (receiver && typeof receiver._maxPayload === 'number') receiver._maxPayload = bytes;
}

/**
 * Pipes a client WebSocket to the browser's CDP endpoint. Client messages pass `guardCdpMessage`
 * (a refused one is answered here and never reaches the browser) and wait in order until the
 * browser side is open; either side closing closes the other.
 */
function proxyCdp(
  client: WebSocket,
  endpoint: string,
  touch: (force?: boolean) => void,
  queued: { data: WebSocket.RawData; isBinary: boolean }[],
) {
  const upstream = new WebSocket(endpoint, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
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

const liveInput = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('mouse'),
    event: z.enum(['mousePressed', 'mouseReleased', 'mouseMoved']),
    x: z.number().finite(),
    y: z.number().finite(),
    button: z.enum(['none', 'left', 'middle', 'right']).default('none'),
    clickCount: z.number().int().min(0).max(3).default(1),
  }),
  z.object({
    type: z.literal('wheel'),
    x: z.number().finite(),
    y: z.number().finite(),
    deltaX: z.number().finite(),
    deltaY: z.number().finite(),
  }),
  z.object({
    type: z.literal('key'),
    event: z.enum(['keyDown', 'keyUp']),
    key: z.string().max(40),
    code: z.string().max(40).optional(),
    text: z.string().max(4).optional(),
    keyCode: z.number().int().optional(),
  }),
]);

/**
 * One viewer: attaches to the browser's first page, streams its screencast and, when its token
 * grants control, forwards input (a view-only viewer's input is dropped). Every viewer has its own
 * CDP connection, so several can watch at once.
 */
async function serveLiveView(
  client: WebSocket,
  endpoint: string,
  viewer: { control: boolean; touch: (force?: boolean) => void },
  deps: AppDeps,
) {
  const { touch } = viewer;
  let cdp: CdpClient | undefined;
  let closed = false;
  const close = () => {
    if (!closed) touch(true);
    closed = true;
    cdp?.close();
    if (client.readyState === WebSocket.OPEN) client.close();
  };
  client.on('close', close);
  client.on('error', close);
  try {
    cdp = await CdpClient.connect(endpoint);
    // The viewer may have left while this connected: its 'close' found no connection to close.
    if (closed) {
      cdp.close();
      return;
    }
    cdp.on('close', () => {
      if (client.readyState === WebSocket.OPEN) client.send(JSON.stringify({ type: 'end' }));
      close();
    });
    const { targetInfos } = await cdp.send<{ targetInfos: { targetId: string; type: string; url: string }[] }>('Target.getTargets');
    // The page worth watching is the one showing something: the newest page that left about:blank.
    const pages = targetInfos.filter((target) => target.type === 'page');
    let targetId = (pages.filter((target) => target.url !== 'about:blank').at(-1) ?? pages[0])?.targetId;
    if (!targetId) targetId = (await cdp.send<{ targetId: string }>('Target.createTarget', { url: 'about:blank' })).targetId;
    const { sessionId } = await cdp.send<{ sessionId: string }>('Target.attachToTarget', { targetId, flatten: true });
    const session = sessionId;
    const page = cdp;
    page.on('Page.screencastFrame', (params: { data: string; metadata: unknown; sessionId: number }, from?: string) => {
      if (from !== session) return;
      if (client.readyState === WebSocket.OPEN)
        client.send(JSON.stringify({ type: 'frame', data: params.data, metadata: params.metadata }));
      page.send('Page.screencastFrameAck', { sessionId: params.sessionId }, session).catch(() => {});
    });
    await page.send('Page.enable', {}, session);
    await page.send('Page.startScreencast', { format: 'jpeg', quality: 70, everyNthFrame: 1 }, session);
    touch();
    client.on('message', (data) => {
      if (!viewer.control) return; // a view-only token: the browser is watched, not driven
      let parsed: z.infer<typeof liveInput>;
      try {
        parsed = liveInput.parse(JSON.parse(String(data)));
      } catch {
        return; // a malformed input event is dropped, the view goes on
      }
      touch();
      const send = (method: string, params: Record<string, unknown>) => page.send(method, params, session).catch(() => {});
      if (parsed.type === 'mouse') {
        void send('Input.dispatchMouseEvent', {
          type: parsed.event,
          x: parsed.x,
          y: parsed.y,
          button: parsed.button,
          clickCount: parsed.clickCount,
        });
      } else if (parsed.type === 'wheel') {
        void send('Input.dispatchMouseEvent', {
          type: 'mouseWheel',
          x: parsed.x,
          y: parsed.y,
          deltaX: parsed.deltaX,
          deltaY: parsed.deltaY,
        });
      } else {
        void send('Input.dispatchKeyEvent', {
          type: parsed.event === 'keyDown' && parsed.text ? 'keyDown' : parsed.event === 'keyDown' ? 'rawKeyDown' : 'keyUp',
          key: parsed.key,
          code: parsed.code,
          text: parsed.event === 'keyDown' ? parsed.text : undefined,
          windowsVirtualKeyCode: parsed.keyCode,
        });
      }
    });
  } catch (error) {
    deps.log.warn({ err: error }, 'live view failed');
    close();
  }
}

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
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
  });
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
