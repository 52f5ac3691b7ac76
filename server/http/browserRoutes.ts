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
import { CdpClient } from '../browsers/cdpClient.ts';
import { liveViewHtml } from '../browsers/liveViewPage.ts';
import type { ResourceTokenUse } from '../browsers/resourceTokens.ts';
import { BadRequest, NotFound, Unauthenticated } from '../errors.ts';
import { LogNotifications } from '../logs/logNotifications.ts';
import { serveLogs, wantsEventStream } from '../logs/logResponses.ts';
import { logStreams } from '../logs/logWriter.ts';
import { pipelineActions, sessionActions } from '../permissions/permissions.ts';
import { isUuid } from '../projects/projectRepository.ts';
import type { AppDeps } from '../trpc/context.ts';
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
const ACTIVITY_TOUCH_MS = 10_000;

/** Raw routes of running browsers: CDP proxy, live view, logs and cookie capture. */
export async function registerBrowserRoutes(
  app: FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, Logger>,
  deps: AppDeps,
) {
  await app.register(websocket, { options: { maxPayload: 256 * 1024 * 1024, perMessageDeflate: false } });
  const notifications = new LogNotifications(deps.orm.config.get('clientUrl') as string, deps.log);
  app.addHook('onClose', () => notifications.close());

  /** Resource by ids, for the token routes: the token is the credential. */
  async function resourceByToken(params: ResourceParams, query: unknown, use: ResourceTokenUse) {
    const parsed = tokenQuery.safeParse(query);
    if (!parsed.success || !isUuid(params.resourceId) || !isUuid(params.sessionId))
      throw new Unauthenticated('A valid token is required', 'invalid_token');
    if (!(await deps.resourceTokens.verify(parsed.data.token, params.resourceId.toLowerCase(), use))) {
      throw new Unauthenticated('The token is invalid or expired', 'invalid_token');
    }
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
    return { em, resource, cdpEndpoint: resource.cdpEndpoint };
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

  const touch = (resourceId: string) =>
    deps.orm.em
      .fork()
      .nativeUpdate(SessionResource, { id: resourceId }, { lastActivity: new Date() })
      .catch(() => {});

  app.get<{ Params: ResourceParams }>(`${base}/logs`, async (req, reply) => {
    const { em, resource } = await resourceForCaller(req, req.params, [sessionActions.read]);
    return serveLogs(req, reply, {
      em,
      notifications,
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
    if (resource.status !== 'running' || !resource.cdpEndpoint) throw new BadRequest('browser_not_running', 'The browser is not running');
    const cdp = await CdpClient.connect(resource.cdpEndpoint);
    const readCookies = async () => (await cdp.send<{ cookies: unknown[] }>('Storage.getCookies')).cookies;
    if (!wantsEventStream(req)) {
      try {
        return reply.send({ cookies: await readCookies() });
      } finally {
        cdp.close();
      }
    }
    return streamCookies(req, reply, cdp, readCookies);
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
          proxyCdp(client, cdpEndpoint, () => touch(resource.id), early);
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
      resourceByToken(req.params, req.query, 'live').then(
        ({ resource, cdpEndpoint }) => serveLiveView(client, cdpEndpoint, () => touch(resource.id), deps),
        (error: Error) => client.close(4001, error.message.slice(0, 120)),
      );
    },
  });
}

/**
 * Pipes a client WebSocket to the browser's CDP endpoint, message for message. Messages from the
 * client wait in order until the browser side is open; either side closing closes the other.
 */
function proxyCdp(
  client: WebSocket,
  endpoint: string,
  touch: () => Promise<unknown>,
  queued: { data: WebSocket.RawData; isBinary: boolean }[],
) {
  const upstream = new WebSocket(endpoint, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
  let lastTouch = 0;
  const active = () => {
    const now = Date.now();
    if (now - lastTouch > ACTIVITY_TOUCH_MS) {
      lastTouch = now;
      void touch();
    }
  };
  active();
  client.on('message', (data, isBinary) => {
    active();
    if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary: isBinary });
    else queued.push({ data, isBinary });
  });
  upstream.on('open', () => {
    for (const { data, isBinary } of queued.splice(0)) upstream.send(data, { binary: isBinary });
  });
  upstream.on('message', (data, isBinary) => {
    if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary });
  });
  const closeBoth = () => {
    if (client.readyState === WebSocket.OPEN || client.readyState === WebSocket.CONNECTING) client.close();
    if (upstream.readyState === WebSocket.OPEN || upstream.readyState === WebSocket.CONNECTING) upstream.terminate();
    void touch();
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
 * One viewer: attaches to the browser's first page, streams its screencast and forwards input.
 * Every viewer has its own CDP connection, so several can watch at once.
 */
async function serveLiveView(client: WebSocket, endpoint: string, touch: () => Promise<unknown>, deps: AppDeps) {
  let cdp: CdpClient | undefined;
  const close = () => {
    cdp?.close();
    if (client.readyState === WebSocket.OPEN) client.close();
  };
  client.on('close', close);
  try {
    cdp = await CdpClient.connect(endpoint);
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
    void touch();
    client.on('message', (data) => {
      let parsed: z.infer<typeof liveInput>;
      try {
        parsed = liveInput.parse(JSON.parse(String(data)));
      } catch {
        return; // a malformed input event is dropped, the view goes on
      }
      void touch();
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

/** SSE of the browser's cookies: the whole jar now, then again whenever it changes. */
function streamCookies(req: FastifyRequest, reply: FastifyReply, cdp: CdpClient, readCookies: () => Promise<unknown[]>) {
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
  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(timer);
    cdp.close();
    raw.write('event: end\ndata: {}\n\n');
    raw.end();
  };
  const poll = async () => {
    const cookies = await readCookies();
    const serialized = JSON.stringify(cookies);
    if (serialized !== last && !closed) {
      last = serialized;
      raw.write(`id: ${++seq}\nevent: cookies\ndata: ${JSON.stringify({ cookies })}\n\n`);
    }
  };
  const timer = setInterval(() => {
    poll().catch(close);
  }, 1_000);
  cdp.on('close', close);
  req.raw.on('close', close);
  poll().catch(close);
}
