/**
 * The service's own reads of a page (the browser host's nodes, pool and agent tools, and the agents'
 * page model, which the host runs) run in an isolated world of their own (CDP
 * `Page.createIsolatedWorld`): it shares the page's DOM but none of its JavaScript, so a page that
 * replaces `Array.prototype.some`, `JSON.stringify` or a DOM method sees neither what the host
 * asks nor what it reads. Only the function's source and its argument cross, and callers hand it
 * selectors, marks and indices, never a run's values: what holds a secret is decided in Node, on
 * what the world hands out (docs/browsers.md, Threat model).
 */
import { randomBytes } from 'node:crypto';
import type { CDPSession, Locator, Page, Frame as PageFrame } from 'playwright-core';

const WORLD_NAME = 'browserflow-host';

type Json = string | number | boolean | null | readonly Json[] | { readonly [key: string]: Json | undefined };

/** A CDP session of the host's on one renderer's part of a page, and the isolated world of each of its frames' current document. */
type World = { session: CDPSession; documents: Map<string, { loaderId: string; contextId: number }> };

type Frame = { id: string; loaderId: string };
type FrameTree = { frame: Frame; childFrames?: FrameTree[] };

/**
 * A page's session reaches its top document and the frames in the same process. A frame of another
 * site runs in a process of its own (site isolation) and is a CDP target of its own: Playwright
 * opens a session on it (`newCDPSession(frame)`), and refuses one for a frame in its parent's process.
 */
const worlds = new WeakMap<Page | PageFrame, Promise<World>>();

const pageOf = (target: Page | PageFrame) => ('parentFrame' in target ? target.page() : target);

function worldOf(target: Page | PageFrame) {
  let world = worlds.get(target);
  if (!world) {
    const opened = pageOf(target)
      .context()
      .newCDPSession(target)
      .then((session) => {
        // An out-of-process frame that navigates gets a new target; its old session closes.
        session.on('close', () => {
          if (worlds.get(target) === opened) worlds.delete(target);
        });
        return { session, documents: new Map() };
      });
    world = opened;
    worlds.set(target, world);
    world.catch(() => worlds.delete(target));
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

/**
 * Calls `declaration` with `args` in the world of `frame`, one of `target`'s frames (the top frame's
 * current document of `target`'s session when not given).
 */
async function call(target: Page | PageFrame, declaration: string, args: readonly Json[], frame?: Frame) {
  const world = await worldOf(target);
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
  return whileOpen(pageOf(target), attempt());
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
 * looked for in the page's other frames when the top document has none of them: first those of
 * the page's process, then those of other sites, through a session on each. Marked elements that
 * no world finds (a page that removes the marks at once) fail the read rather than read as none.
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
  const read = async (target: Page | PageFrame, frame?: Frame) =>
    (await call(target, declaration, [mark, arg ?? null], frame)) as { found: number; value: R };
  const top = await read(page);
  if (top.found > 0 || matched === 0) return top.value;
  let failure: unknown;
  /** The value read in the first of `target`'s frames holding the marks (its root frame skipped when already read). */
  const readFrames = async (target: Page | PageFrame, tree: FrameTree, withRoot: boolean) => {
    const frames: Frame[] = withRoot ? [tree.frame] : [];
    const walk = (node: FrameTree) => {
      for (const child of node.childFrames ?? []) {
        frames.push(child.frame);
        walk(child);
      }
    };
    walk(tree);
    for (const frame of frames) {
      // A frame that went away since the marks were set fails alone; the others are still read.
      const inFrame = await read(target, frame).catch((error: unknown) => {
        failure = error;
        return null;
      });
      if (inFrame && inFrame.found > 0) return inFrame;
    }
    return null;
  };
  const inProcess = await readFrames(page, await frameTree(await worldOf(page)), false);
  if (inProcess) return inProcess.value;
  for (const frame of page.frames()) {
    if (frame === page.mainFrame()) continue;
    // Playwright refuses a session for a frame of the page's process: those were read above.
    const world = await worldOf(frame).catch(() => null);
    if (!world) continue;
    const outOfProcess = await frameTree(world)
      .then((tree) => readFrames(frame, tree, true))
      .catch((error: unknown) => {
        failure = error;
        return null;
      });
    if (outOfProcess) return outOfProcess.value;
  }
  throw new Error(`${matched} element${matched === 1 ? '' : 's'} matched but could not be read: no frame of the page still holds them`, {
    cause: failure,
  });
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
