/**
 * The browser nodes' implementations (their specs: server/pipelines/engine/nodes/browser.ts): they
 * navigate and act on a page. One entry per type of those specs, but the one that opens a page,
 * which executeNode serves; the table is assembled in ./browserNodes.ts.
 */
import type { Page } from 'playwright-core';
import { NodeError, NodeInputError } from '../../../pipelines/engine/nodeErrors.ts';
import { evaluateIsolated } from '../../page/isolatedWorld.ts';
import type { ImplementationsOf } from './browserNode.ts';
import { actAndWait, attempt, budget, firstLine, log, withTimeout } from './pageCalls.ts';

export const browserNodeImplementations = {
  async 'page.goto'(page, inputs, ctx) {
    const { url } = inputs;
    const response = await attempt(`opening ${url}`, () => page.goto(url, { waitUntil: inputs.waitUntil, timeout: ctx.timeoutMs }));
    const status = response?.status() ?? 0;
    log(ctx, page, `opened ${page.url()} (${status || 'no response'})`);
    return { url: page.url(), status };
  },

  async 'page.click'(page, inputs, ctx) {
    const left = budget(ctx);
    const { selector, index } = inputs;
    const locator = page.locator(selector).nth(index);
    await actAndWait(page, inputs, left, `clicking \`${selector}\``, () => locator.click({ timeout: left() }));
    log(ctx, page, `clicked ${selector}`);
    return {};
  },

  async 'page.fill'(page, inputs, ctx) {
    const left = budget(ctx);
    const { selector, value, index } = inputs;
    await attempt(`filling \`${selector}\``, () => page.locator(selector).nth(index).fill(value, { timeout: left() }), 'not_found');
    // Never the value: it may be a secret.
    log(ctx, page, `filled ${selector}`);
    return {};
  },

  async 'page.press'(page, inputs, ctx) {
    const left = budget(ctx);
    const { key, selector } = inputs;
    const what = `pressing ${key}${selector ? ` in \`${selector}\`` : ''}`;
    await actAndWait(page, inputs, left, what, () =>
      selector ? page.locator(selector).first().press(key, { timeout: left() }) : page.keyboard.press(key),
    );
    log(ctx, page, what.replace(/^pressing/, 'pressed'));
    return {};
  },

  async 'page.select'(page, inputs, ctx) {
    const left = budget(ctx);
    const { selector, value } = inputs;
    const values = typeof value === 'string' ? [value] : value;
    const selected = await attempt(
      `choosing in \`${selector}\``,
      () => page.locator(selector).first().selectOption(values, { timeout: left() }),
      'not_found',
    );
    log(ctx, page, `selected ${selected.length} option(s) in ${selector}`);
    return { selected };
  },

  async 'page.wait'(page, inputs, ctx) {
    const left = budget(ctx);
    const { selector, loadState, url, ms } = inputs;
    if (selector) {
      const { state } = inputs;
      await attempt(
        `waiting for \`${selector}\` to be ${state}`,
        () => page.locator(selector).first().waitFor({ state, timeout: left() }),
        state === 'visible' || state === 'attached' ? 'not_found' : 'timeout',
      );
    }
    if (loadState) await attempt(`waiting for ${loadState}`, () => page.waitForLoadState(loadState, { timeout: left() }));
    if (url) await attempt(`waiting for the URL ${url}`, () => page.waitForURL(url, { timeout: left() }));
    if (ms !== undefined) {
      if (ms >= left()) throw new NodeInputError(`\`ms\` (${ms}) does not fit in the node's timeout`);
      await page.waitForTimeout(ms);
    }
    return {};
  },

  async 'page.scroll'(page, inputs, ctx) {
    const left = budget(ctx);
    const { selector } = inputs;
    if (selector) {
      await attempt(
        `scrolling to \`${selector}\``,
        () => page.locator(selector).first().scrollIntoViewIfNeeded({ timeout: left() }),
        'not_found',
      );
    } else {
      const { to, by, times, delayMs } = inputs;
      for (let i = 0; i < times; i++) {
        await attempt('scrolling', () =>
          evaluateIsolated(
            page,
            ([target, delta]) => {
              if (delta !== null) window.scrollBy(0, delta);
              else window.scrollTo(0, target === 'top' ? 0 : document.documentElement.scrollHeight);
            },
            [to, by ?? null] as const,
          ),
        );
        if (delayMs) await page.waitForTimeout(Math.min(delayMs, left()));
      }
    }
    const position = await attempt('reading the scroll position', () =>
      evaluateIsolated(page, () => ({ scrollY: window.scrollY, scrollHeight: document.documentElement.scrollHeight })),
    );
    return position;
  },

  async 'page.evaluate'(page, inputs, ctx) {
    const { script } = inputs;
    const arg = inputs.arg === undefined ? null : inputs.arg;
    // A function body with `arg` in scope. Evaluated through CDP, so a page's CSP does not block it.
    // The one main-world evaluate of the host: the user's own script for the page's own objects.
    // The page sees that script and the `arg` the pipeline hands it, nothing else of the run.
    const expression = `(async (arg) => {\n${script}\n})(${JSON.stringify(arg)})`;
    let result: unknown;
    try {
      result = await withTimeout(page.evaluate(expression), ctx.timeoutMs, 'the script');
    } catch (error) {
      if (error instanceof NodeError) throw error;
      const message = error instanceof Error ? firstLine(error.message).replace(/^page\.evaluate:\s*/, '') : String(error);
      throw new NodeError('script_error', `the script failed: ${message}`, { cause: error, retryable: false });
    }
    let json: unknown;
    try {
      json = JSON.parse(JSON.stringify(result ?? null));
    } catch {
      throw new NodeError('script_error', 'the script returned a value that is not JSON', { retryable: false });
    }
    log(ctx, page, 'ran a script in the page');
    return { result: json };
  },

  async 'page.download'(page, inputs, ctx) {
    const { selector, url, index } = inputs;
    if (selector !== undefined && url !== undefined) throw new NodeInputError('give `selector` or `url`, not both');
    if (!ctx.downloads) throw new NodeError('no_page', 'page.download runs only on a session’s browser at its host', { retryable: false });
    const left = budget(ctx);
    const frameIds = await attempt('reading the page’s frames', () => frameIdsOf(page));
    const expected = ctx.downloads.expect(frameIds, left());
    try {
      if (selector !== undefined) {
        await attempt(`clicking \`${selector}\``, () => page.locator(selector).nth(index).click({ timeout: left() }), 'not_found');
      } else if (url !== undefined) {
        // A response that is a file aborts the navigation: that is the download starting.
        await page.goto(url, { timeout: left(), waitUntil: 'commit' }).catch((error: unknown) => {
          const message = error instanceof Error ? error.message : String(error);
          if (!/ERR_ABORTED|Download is starting/i.test(message))
            throw new NodeError('navigation_failed', `opening ${url} failed: ${firstLine(message)}`, { cause: error });
        });
      }
      const file = await expected.file.catch((error: unknown) => {
        throw new NodeError('download_failed', error instanceof Error ? error.message : String(error), { cause: error, retryable: false });
      });
      log(ctx, page, `downloaded ${file.name} (${file.size} bytes)`);
      return { file };
    } finally {
      expected.cancel();
    }
  },
} satisfies ImplementationsOf<'browser'>;

/** The ids of a page's frames, as CDP's download events name the frame a download began in. */
async function frameIdsOf(page: Page) {
  const session = await page.context().newCDPSession(page);
  try {
    type Tree = { frame: { id: string }; childFrames?: Tree[] };
    const { frameTree } = (await session.send('Page.getFrameTree')) as { frameTree: Tree };
    const ids = new Set<string>();
    const walk = (tree: Tree) => {
      ids.add(tree.frame.id);
      for (const child of tree.childFrames ?? []) walk(child);
    };
    walk(frameTree);
    return ids;
  } finally {
    await session.detach().catch(() => {});
  }
}
