/**
 * The host's own reads of a page run in an isolated world of its own (CDP
 * `Page.createIsolatedWorld`): it shares the page's DOM but none of its JavaScript, so a page that
 * replaces `Array.prototype.some`, `JSON.stringify` or a DOM method sees neither what the host
 * asks nor what it reads. Only the function's source and its argument cross, and callers hand it
 * selectors, marks and indices, never a run's values: what holds a secret is decided in Node, on
 * what the world hands out (docs/browsers.md, Threat model).
 */
import { randomBytes } from 'node:crypto';
import type { CDPSession, Locator, Page } from 'playwright-core';

const WORLD_NAME = 'browserflow-host';

type Json = string | number | boolean | null | readonly Json[] | { readonly [key: string]: Json | undefined };

/** A page's CDP session of the host's, and the isolated world of each frame's current document. */
type World = { session: CDPSession; documents: Map<string, { loaderId: string; contextId: number }> };

type Frame = { id: string; loaderId: string };
type FrameTree = { frame: Frame; childFrames?: FrameTree[] };

const worlds = new WeakMap<Page, Promise<World>>();

function worldOf(page: Page) {
  let world = worlds.get(page);
  if (!world) {
    world = page
      .context()
      .newCDPSession(page)
      .then((session) => ({ session, documents: new Map() }));
    worlds.set(page, world);
    world.catch(() => worlds.delete(page));
  }
  return world;
}

async function frameTree(world: World): Promise<FrameTree> {
  return (await world.session.send('Page.getFrameTree')).frameTree;
}

/**
 * The world's execution context in `frame`'s current document. A world dies with its document;
 * each `createIsolatedWorld` makes a new one, so one is kept per document (its `loaderId`), and
 * one more is made when Chromium no longer knows the kept one.
 */
async function contextOf(world: World, frame: Frame, fresh: boolean) {
  const kept = world.documents.get(frame.id);
  if (!fresh && kept?.loaderId === frame.loaderId) return kept.contextId;
  const { executionContextId } = await world.session.send('Page.createIsolatedWorld', {
    frameId: frame.id,
    worldName: WORLD_NAME,
    grantUniveralAccess: false,
  });
  world.documents.set(frame.id, { loaderId: frame.loaderId, contextId: executionContextId });
  return executionContextId;
}

/** The kept context is gone (its document navigated away) before the call ran: safe to run again. */
const contextGone = (error: unknown) => error instanceof Error && /Cannot find context with specified id/i.test(error.message);

/** Calls `declaration` with `args` in the world of `frame` (the top frame's current document when not given). */
async function call(page: Page, declaration: string, args: readonly Json[], frame?: Frame) {
  const world = await worldOf(page);
  const run = async (fresh: boolean) => {
    const executionContextId = await contextOf(world, frame ?? (await frameTree(world)).frame, fresh);
    const { result, exceptionDetails } = await world.session.send('Runtime.callFunctionOn', {
      functionDeclaration: declaration,
      executionContextId,
      arguments: args.map((value) => ({ value })),
      returnByValue: true,
      awaitPromise: true,
    });
    if (exceptionDetails) {
      const message = exceptionDetails.exception?.description ?? exceptionDetails.text;
      throw new Error(message.split('\n')[0]);
    }
    return result.value as unknown;
  };
  const attempt = async () => {
    try {
      return await run(false);
    } catch (error) {
      if (!contextGone(error)) throw error;
      return run(true);
    }
  };
  return whileOpen(page, attempt());
}

/**
 * `work`, or a failure as soon as the page crashes or closes: Chromium leaves a command to a
 * crashed renderer unanswered, and Playwright fails only its own calls then.
 */
async function whileOpen<T>(page: Page, work: Promise<T>): Promise<T> {
  if (page.isClosed()) throw new Error('the page was closed');
  let gone = () => {};
  const ended = new Promise<never>((_, reject) => {
    gone = () => reject(new Error(page.isClosed() ? 'the page was closed' : 'the page crashed'));
  });
  page.on('crash', gone).on('close', gone);
  try {
    return await Promise.race([work, ended]);
  } finally {
    page.off('crash', gone).off('close', gone);
  }
}

/**
 * Runs `fn(arg)` in the host's isolated world of `page`'s top document and answers its result
 * (JSON: DOM nodes do not come out). `fn` is sent as source: it may use nothing of its module.
 */
export async function evaluateIsolated<R, A extends Json | undefined = undefined>(
  page: Page,
  fn: (arg: A) => R | Promise<R>,
  arg?: A,
): Promise<R> {
  return (await call(page, String(fn), [arg ?? null])) as R;
}

/**
 * Runs `fn(elements, arg)` in the isolated world on the elements `locator` matches, in its order.
 * Playwright's selector engine (CSS piercing open shadow roots, `text=`, `>>` chains) runs in the
 * page's main world for this: it marks the matches with an attribute of a fresh random name, and
 * the isolated world reads the marked elements and removes the marks. The page sees the selector
 * and the mark's name, nothing of a run. Matches in a frame (a selector that enters one) are
 * looked for in the page's other frames when the top document has none of them.
 */
export async function evaluateMatches<R, A extends Json | undefined = undefined>(
  locator: Locator,
  fn: (elements: Element[], arg: A) => R | Promise<R>,
  arg?: A,
): Promise<R> {
  const mark = `data-bf-${randomBytes(6).toString('hex')}`;
  const matched = await locator.evaluateAll((elements, name) => {
    for (const [index, element] of elements.entries()) element.setAttribute(name, String(index));
    return elements.length;
  }, mark);
  const declaration = `async function (mark, arg) {
    const elements = (${String(takeMarked)})(mark);
    return { found: elements.length, value: await (${String(fn)})(elements, arg) };
  }`;
  const page = locator.page();
  const read = async (frame?: Frame) => (await call(page, declaration, [mark, arg ?? null], frame)) as { found: number; value: R };
  const top = await read();
  if (top.found > 0 || matched === 0) return top.value;
  const frames: Frame[] = [];
  const walk = (tree: FrameTree) => {
    for (const child of tree.childFrames ?? []) {
      frames.push(child.frame);
      walk(child);
    }
  };
  walk(await frameTree(await worldOf(page)));
  for (const frame of frames) {
    // A frame of another process (another site) is a target of its own, out of this session's reach.
    const inFrame = await read(frame).catch(() => null);
    if (inFrame && inFrame.found > 0) return inFrame.value;
  }
  return top.value;
}

/** The elements marked `mark` (in the document and its open shadow roots), in the mark's order, unmarked. */
function takeMarked(mark: string): Element[] {
  const found: Element[] = [];
  const visit = (root: Document | ShadowRoot) => {
    for (const element of root.querySelectorAll(`[${mark}]`)) found.push(element);
    for (const element of root.querySelectorAll('*')) if (element.shadowRoot) visit(element.shadowRoot);
  };
  visit(document);
  const order = (element: Element) => Number(element.getAttribute(mark));
  found.sort((a, b) => order(a) - order(b));
  for (const element of found) element.removeAttribute(mark);
  return found;
}
