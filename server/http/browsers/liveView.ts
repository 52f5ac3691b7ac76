import WebSocket from 'ws';
import { z } from 'zod';
import type { AppDeps } from '../../appDeps.ts';
import { CdpClient } from '../../browsers/cdp/cdpClient.ts';
import { BadRequest } from '../../errors.ts';
import { htmlAnswer } from '../rawAnswers.ts';
import { routesOf } from '../rawRoute.ts';
import { isNavigableUrl } from './cdpGuard.ts';
import { liveViewHtml } from './liveViewPage.ts';
import { type BrowserScope, browserByToken, resourceByToken, resourcePath, tokenParam } from './resources.ts';

/** Live-view input events are a few hundred bytes; nothing bigger is read into memory. */
const LIVE_MAX_PAYLOAD = 64 * 1024;

/** What a request's token opened, from its upgrade check to its socket. */
const verified = new WeakMap<object, Awaited<ReturnType<typeof browserByToken>>>();

const route = routesOf<BrowserScope>();

/** The live view of a running browser (vncUrl): its page, and the WebSocket of frames and input, behind its token. */
export const liveViewRoutes = [
  route({
    method: 'GET',
    path: `${resourcePath}/live`,
    doc: {
      operationId: 'sessions-live-view',
      summary: 'Live view page (vncUrl)',
      tags: ['sessions'],
      parameters: [tokenParam],
      responses: htmlAnswer(),
    },
    serve:
      ({ deps }) =>
      async (req, reply) => {
        await resourceByToken(deps, req.params, req.query, 'live');
        return reply
          .type('text/html; charset=utf-8')
          .header(
            'content-security-policy',
            // Framed by the console of this origin only (it can navigate the browser).
            "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'self'",
          )
          .header('referrer-policy', 'no-referrer')
          .send(liveViewHtml());
      },
  }),
  route({
    method: 'GET',
    path: `${resourcePath}/live/ws`,
    doc: {
      operationId: 'sessions-live-socket',
      summary: 'Live view WebSocket: screencast frames out, mouse/keyboard/wheel input in',
      tags: ['sessions'],
      parameters: [tokenParam],
      responses: { '101': { description: 'WebSocket upgrade' } },
    },
    serve: ({ deps, touch }) => ({
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
    }),
  }),
];

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
  // The bar above the screen: the address, back and forward, and the tabs.
  z.object({ type: z.literal('navigate'), url: z.string().min(1).max(4096) }),
  z.object({ type: z.literal('history'), delta: z.union([z.literal(-1), z.literal(1)]) }),
  z.object({ type: z.literal('tab'), targetId: z.string().min(1).max(100) }),
]);

type TargetInfo = { targetId: string; type: string; url: string; title: string };

/** What is typed in the address bar as a URL: a bare host gets https://. */
function typedUrl(text: string) {
  const trimmed = text.trim();
  return /^[a-z][a-z0-9+.-]*:/i.test(trimmed) ? trimmed : `https://${trimmed}`;
}

/**
 * One viewer: attaches to the browser's page that shows something, streams its screencast and,
 * when its token grants control, forwards input (a view-only viewer's input is dropped): mouse,
 * wheel and keys, and the bar's address, back and forward, and a switch of tab. The viewer is told
 * the watched tab's address (and whether it can go back or forward) and the tabs as they change. Every viewer has its own
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
    const browser = cdp;
    const send = (message: Record<string, unknown>) => {
      if (client.readyState === WebSocket.OPEN) client.send(JSON.stringify(message));
    };
    /** The tab whose screen is streamed, and the CDP session attached to it. */
    let watched: { targetId: string; session: string } | undefined;
    // The tabs: every page target, kept current by target discovery.
    const tabs = new Map<string, TargetInfo>();
    const sendTabs = () =>
      send({
        type: 'tabs',
        current: watched?.targetId,
        tabs: [...tabs.values()].map(({ targetId, url, title }) => ({ targetId, url, title })),
      });
    const remember = (info: TargetInfo) => {
      if (info.type !== 'page') return;
      tabs.set(info.targetId, info);
      sendTabs();
    };
    browser.on('Target.targetCreated', ({ targetInfo }: { targetInfo: TargetInfo }) => remember(targetInfo));
    browser.on('Target.targetInfoChanged', ({ targetInfo }: { targetInfo: TargetInfo }) => remember(targetInfo));
    browser.on('Target.targetDestroyed', ({ targetId }: { targetId: string }) => {
      tabs.delete(targetId);
      sendTabs();
      // The watched tab closed: watch another, as a browser shows the next tab.
      if (watched?.targetId === targetId) {
        const next = [...tabs.keys()].at(-1);
        if (next) void watch(next).catch(() => close());
      }
    });
    await browser.send('Target.setDiscoverTargets', { discover: true });
    const { targetInfos } = await browser.send<{ targetInfos: TargetInfo[] }>('Target.getTargets');
    for (const info of targetInfos) if (info.type === 'page') tabs.set(info.targetId, info);

    /** The watched tab's address and whether it can go back or forward. */
    const history = (session: string) =>
      browser.send<{ currentIndex: number; entries: { id: number; url: string; title: string }[] }>(
        'Page.getNavigationHistory',
        {},
        session,
      );
    const sendLocation = async () => {
      const current = watched;
      if (!current) return;
      const { currentIndex, entries } = await history(current.session);
      if (watched !== current) return;
      send({
        type: 'location',
        url: entries[currentIndex]?.url ?? '',
        canGoBack: currentIndex > 0,
        canGoForward: currentIndex < entries.length - 1,
      });
    };
    browser.on('Page.screencastFrame', (params: { data: string; metadata: unknown; sessionId: number }, from?: string) => {
      if (from !== watched?.session) return;
      send({ type: 'frame', data: params.data, metadata: params.metadata });
      browser.send('Page.screencastFrameAck', { sessionId: params.sessionId }, from).catch(() => {});
    });
    const navigated = (params: { frame?: { parentId?: string }; frameId?: string }, from?: string) => {
      if (from === watched?.session && !params.frame?.parentId) void sendLocation().catch(() => {});
    };
    browser.on('Page.frameNavigated', navigated);
    browser.on('Page.navigatedWithinDocument', navigated);
    // A tab's title is known only once its document is parsed, and Chromium may not report the
    // change: the watched tab's target is read again when its document has loaded.
    const loaded = (_params: unknown, from?: string) => {
      const current = watched;
      if (!current || from !== current.session) return;
      browser
        .send<{ targetInfo: TargetInfo }>('Target.getTargetInfo', { targetId: current.targetId })
        .then(({ targetInfo }) => {
          if (tabs.has(targetInfo.targetId)) remember(targetInfo);
        })
        .catch(() => {});
    };
    browser.on('Page.domContentEventFired', loaded);
    browser.on('Page.loadEventFired', loaded);

    /** Streams `targetId`'s screen instead of the tab watched so far. */
    const watch = async (targetId: string) => {
      const previous = watched;
      const { sessionId } = await browser.send<{ sessionId: string }>('Target.attachToTarget', { targetId, flatten: true });
      watched = { targetId, session: sessionId };
      if (previous) {
        await browser.send('Page.stopScreencast', {}, previous.session).catch(() => {});
        await browser.send('Target.detachFromTarget', { sessionId: previous.session }).catch(() => {});
      }
      await browser.send('Page.enable', {}, sessionId);
      await browser.send('Page.startScreencast', { format: 'jpeg', quality: 70, everyNthFrame: 1 }, sessionId);
      sendTabs();
      await sendLocation();
    };
    // The page worth watching is the one showing something: the newest page that left about:blank.
    const pages = [...tabs.values()];
    let first = (pages.filter((target) => target.url !== 'about:blank').at(-1) ?? pages[0])?.targetId;
    if (!first) first = (await browser.send<{ targetId: string }>('Target.createTarget', { url: 'about:blank' })).targetId;
    await watch(first);
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
      const session = watched?.session;
      if (!session) return;
      const command = (method: string, params: Record<string, unknown>) => browser.send(method, params, session).catch(() => {});
      switch (parsed.type) {
        case 'mouse':
          void command('Input.dispatchMouseEvent', {
            type: parsed.event,
            x: parsed.x,
            y: parsed.y,
            button: parsed.button,
            clickCount: parsed.clickCount,
          });
          break;
        case 'wheel':
          void command('Input.dispatchMouseEvent', {
            type: 'mouseWheel',
            x: parsed.x,
            y: parsed.y,
            deltaX: parsed.deltaX,
            deltaY: parsed.deltaY,
          });
          break;
        case 'key':
          void command('Input.dispatchKeyEvent', {
            type: parsed.event === 'keyDown' && parsed.text ? 'keyDown' : parsed.event === 'keyDown' ? 'rawKeyDown' : 'keyUp',
            key: parsed.key,
            code: parsed.code,
            text: parsed.event === 'keyDown' ? parsed.text : undefined,
            windowsVirtualKeyCode: parsed.keyCode,
          });
          break;
        case 'navigate': {
          // The same rule as a CDP client's Page.navigate (no file:, chrome:, devtools: …); the
          // egress policy then decides where the request may go, as for any navigation.
          const url = typedUrl(parsed.url);
          if (isNavigableUrl(url)) void command('Page.navigate', { url });
          else send({ type: 'refused', message: `not a page the live view opens: ${url.slice(0, 200)}` });
          break;
        }
        case 'history':
          void history(session)
            .then(({ currentIndex, entries }) => {
              const entry = entries[currentIndex + parsed.delta];
              if (entry) return command('Page.navigateToHistoryEntry', { entryId: entry.id });
            })
            .catch(() => {});
          break;
        case 'tab':
          if (tabs.has(parsed.targetId)) {
            void watch(parsed.targetId)
              .then(() => browser.send('Target.activateTarget', { targetId: parsed.targetId }))
              .catch(() => {});
          }
          break;
      }
    });
  } catch (error) {
    deps.log.warn({ err: error }, 'live view failed');
    close();
  }
}
