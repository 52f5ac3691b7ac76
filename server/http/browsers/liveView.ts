import WebSocket from 'ws';
import { z } from 'zod';
import type { AppDeps } from '../../appDeps.ts';
import { CdpClient } from '../../browsers/cdpClient.ts';
import { BadRequest } from '../../errors.ts';
import type { RawRoutePaths } from '../openapi.ts';
import { htmlAnswer } from '../rawAnswers.ts';
import type { BrowserApp } from './index.ts';
import { liveViewHtml } from './liveViewPage.ts';
import {
  type ActivityTouch,
  browserByToken,
  type ResourceParams,
  resourceByToken,
  resourceDocPath,
  resourcePath,
  resourcePathParams,
  tokenParam,
} from './resources.ts';

export const liveViewPaths: RawRoutePaths = {
  [`${resourceDocPath}/live`]: {
    get: {
      summary: 'Live view page (vncUrl)',
      tags: ['sessions'],
      parameters: [...resourcePathParams, tokenParam],
      responses: htmlAnswer(),
    },
  },
  [`${resourceDocPath}/live/ws`]: {
    get: {
      summary: 'Live view WebSocket: screencast frames out, mouse/keyboard/wheel input in',
      tags: ['sessions'],
      parameters: [...resourcePathParams, tokenParam],
      responses: { '101': { description: 'WebSocket upgrade' } },
    },
  },
};

/** Live-view input events are a few hundred bytes; nothing bigger is read into memory. */
const LIVE_MAX_PAYLOAD = 64 * 1024;

/** What a request's token opened, from its upgrade check to its socket. */
const verified = new WeakMap<object, Awaited<ReturnType<typeof browserByToken>>>();

/** The live view of a running browser (vncUrl): its page, and the WebSocket of frames and input, behind its token. */
export function registerLiveView(app: BrowserApp, deps: AppDeps, touch: ActivityTouch) {
  app.get<{ Params: ResourceParams; Querystring: { token?: string } }>(`${resourcePath}/live`, async (req, reply) => {
    await resourceByToken(deps, req.params, req.query, 'live');
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
    url: `${resourcePath}/live/ws`,
    handler: async () => {
      throw new BadRequest('websocket_required', 'This endpoint speaks WebSocket');
    },
    // The token is checked before the upgrade, as the CDP proxy's is.
    preValidation: async (req) => {
      verified.set(req, await browserByToken(deps, req.params, req.query, 'live'));
    },
    wsHandler: (client, req) => {
      limitPayload(client, LIVE_MAX_PAYLOAD);
      const target = verified.get(req);
      verified.delete(req);
      if (!target) return client.close(4001, 'not authorised');
      const { resource, browserUrl, grant } = target;
      void serveLiveView(client, browserUrl, { control: grant.control, touch: (force) => touch(resource.id, force) }, deps);
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
  browserUrl: string,
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
    cdp = await CdpClient.connect(browserUrl);
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
