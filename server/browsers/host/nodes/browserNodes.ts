/**
 * The implementations of the browser and extract nodes, whose specs live in the engine
 * (server/pipelines/engine/nodes/browser.ts and extract.ts): each takes a live playwright-core
 * Page and the node's inputs, typed from its spec, and answers its outputs, without the `page`
 * output, which executeNode adds (the handle passes through unchanged). They run on the browser's
 * host, inside an activity. The table has one entry per type of those specs (but the one that
 * opens a page, which executeNode serves): a spec without its implementation does not compile.
 *
 * Playwright's own waits are bounded by what is left of the node's time budget, so a node fails
 * with its own error ("no element matches …") before the activity's timeout cuts it off.
 */
import type { Locator, Page } from 'playwright-core';
import type { NewLogEntry } from '../../../logs/logWriter.ts';
import { NodeError, NodeInputError } from '../../../pipelines/engine/nodeErrors.ts';
import { PAGING_MAX_PAGES } from '../../../pipelines/engine/nodes/extract.ts';
import type { NAVIGATION_STATES } from '../../../pipelines/engine/nodes/parts.ts';
import type { InputsOf, NodeTypeSpec, OutputsOf } from '../../../pipelines/engine/nodes/spec.ts';
import type { BrowserNodeType, NodeSpecOf } from '../../../pipelines/engine/registry.ts';
import { evaluateIsolated, evaluateMatches } from '../isolatedWorld.ts';
import { type CellType, convertText, uniqueKeys } from './cellValues.ts';

/** The largest screenshot (base64) a node may answer: its outputs go through workflow history. */
const MAX_IMAGE_BASE64 = 1_500_000;

export type BrowserNodeContext = {
  /** Milliseconds the node may take in all. */
  timeoutMs: number;
  log: (entry: NewLogEntry) => void;
};

/**
 * A browser node's implementation. executeNode hands it its inputs as checkNodeInputs
 * (server/pipelines/engine/nodeInputs.ts) answers them: types, enums, bounds and shapes checked
 * against the spec, defaults filled in, an optional input not given absent; `InputsOf` says so.
 */
export type BrowserNode<S extends NodeTypeSpec> = (page: Page, inputs: InputsOf<S>, ctx: BrowserNodeContext) => Promise<OutputsOf<S>>;

/** The node that opens a page has no page to act on: executeNode serves it (`spec.opensPage`). */
type PageOpeningType = Extract<NodeSpecOf<BrowserNodeType>, { opensPage: true }>['type'];

export type BrowserImplementations = { [T in Exclude<BrowserNodeType, PageOpeningType>]: BrowserNode<NodeSpecOf<T>> };

/** How executeNode calls an implementation: by type, on inputs it checked against that type's spec. */
type CheckedBrowserNode = (page: Page, inputs: Record<string, unknown>, ctx: BrowserNodeContext) => Promise<Record<string, unknown>>;

// ---- time and errors ------------------------------------------------------------------------

/** The time left of the node's budget, at least 1 ms (0 would mean "no timeout" to Playwright). */
function budget(ctx: BrowserNodeContext) {
  const deadline = Date.now() + ctx.timeoutMs;
  return () => Math.max(1, deadline - Date.now());
}

const firstLine = (message: string) => message.split('\n')[0]?.trim() ?? '';

const isTimeout = (error: unknown) => error instanceof Error && error.name === 'TimeoutError';

/** Playwright's error as a NodeError: only the first line (the call log may quote inputs). */
function failure(error: unknown, what: string, timeoutCode: 'timeout' | 'not_found' = 'timeout'): NodeError {
  if (error instanceof NodeError) return error;
  if (isTimeout(error)) return new NodeError(timeoutCode, `${what}: timed out`, { cause: error });
  const message = error instanceof Error ? firstLine(error.message) : String(error);
  return new NodeError('browser_error', `${what}: ${message}`, { cause: error });
}

async function attempt<T>(what: string, run: () => Promise<T>, timeoutCode: 'timeout' | 'not_found' = 'timeout'): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw failure(error, what, timeoutCode);
  }
}

/** Waits for a first match of `selector` (attached to the document). */
async function waitForMatch(locator: Locator, selector: string, timeout: number) {
  try {
    await locator.first().waitFor({ state: 'attached', timeout });
  } catch (error) {
    if (isTimeout(error)) throw new NodeError('not_found', `no element matches \`${selector}\` (waited ${timeout} ms)`, { cause: error });
    throw failure(error, `selector \`${selector}\``);
  }
}

/**
 * Reads what matches `selector` in one browser call; when nothing matches yet and the node is not
 * `optional`, waits for a first match (attached) and reads again. Reading first saves the wait's
 * round trips when the element is there, as it mostly is.
 */
async function readMatches<T>(
  locator: Locator,
  optional: boolean,
  selector: string,
  left: () => number,
  read: () => Promise<T>,
  matched: (result: T) => boolean,
) {
  const what = `reading \`${selector}\``;
  // The wait's time is taken before the read, so it still says how long the node waited in all.
  const timeout = left();
  const first = await attempt(what, read);
  if (matched(first) || optional) return first;
  await waitForMatch(locator, selector, timeout);
  return attempt(what, read);
}

/**
 * Runs an action that may navigate. With a load state, waits for the navigation the action
 * starts (registered before the action, so a fast navigation is not missed); then, with
 * `waitForSelector`, for that element to be visible.
 */
async function actAndWait(
  page: Page,
  { waitFor, waitForSelector }: { waitFor: (typeof NAVIGATION_STATES)[number]; waitForSelector: string | undefined },
  left: () => number,
  what: string,
  action: () => Promise<unknown>,
) {
  if (waitFor === 'none') {
    await attempt(what, action, 'not_found');
  } else {
    const navigation = page.waitForNavigation({ waitUntil: waitFor, timeout: left() });
    try {
      await Promise.all([navigation, action()]);
    } catch (error) {
      navigation.catch(() => {});
      throw failure(error, isTimeout(error) ? `${what} (waiting for the navigation to ${waitFor})` : what, 'not_found');
    }
  }
  if (waitForSelector) {
    const timeout = left();
    await attempt(
      `waiting for \`${waitForSelector}\` after ${what}`,
      () => page.locator(waitForSelector).first().waitFor({ state: 'visible', timeout }),
      'not_found',
    );
  }
}

const log = (ctx: BrowserNodeContext, page: Page, message: string, severity: NewLogEntry['severity'] = 'info') =>
  ctx.log({ context: page.url() || 'about:blank', severity, message, area: 'node' });

// ---- paging ---------------------------------------------------------------------------------

/** The `pages` input of extract.table and extract.list, as its spec's check guarantees it. */
type Paging = { links?: string; more?: string; scroll?: true; max?: number };

/** How long a "more" click or a scroll may take to add items before the listing counts as complete. */
const GROWTH_WAIT_MS = 4_000;
/** How long a page reached by a pager link may take to show the listing (it may be past the end). */
const LATER_PAGE_WAIT_MS = 5_000;

/** A listing the paging reads: its items counted and the last one shown, and its records read. */
type Listing<R> = {
  count: () => Promise<number>;
  revealLast: () => Promise<void>;
  /** The records the page shows now; `later`: a page reached by paging, where no match means none. */
  read: (later: boolean) => Promise<R[]>;
};

/** Waits until the listing has more than `before` items; false when the wait ends first. */
async function grew(listing: Listing<unknown>, before: number, ms: number) {
  const until = Date.now() + ms;
  for (;;) {
    if ((await listing.count()) > before) return true;
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(150, Math.max(1, until - Date.now()))));
  }
}

/**
 * The records of a listing across its pages (the `pages` input): without paging, the page as it
 * is. `links` visits each address its links lead to once, in the order found, and drops a page whose
 * records equal an earlier page's (a "1" link back to the start, a "newer" link); `more` and
 * `scroll` grow the page until it stops growing, then read it once. Every wait is bounded by the
 * node's budget; a listing that needs longer fails with `timeout` rather than coming back cut short.
 */
async function readPaged<R>(page: Page, paging: Paging | undefined, listing: Listing<R>, left: () => number, ctx: BrowserNodeContext) {
  if (!paging) return listing.read(false);
  const max = paging.max ?? PAGING_MAX_PAGES;
  const outOfTime = () => {
    if (left() <= 1) throw new NodeError('timeout', 'paging: the node’s timeout ended before the last page; raise `timeoutMs`');
  };
  if (paging.more) {
    const button = page.locator(paging.more).first();
    let clicks = 0;
    while (clicks < max) {
      outOfTime();
      const ready = await attempt('finding the "more" button', async () => (await button.isVisible()) && (await button.isEnabled()));
      if (!ready) break;
      const before = await attempt('counting the items', listing.count);
      await attempt(`clicking \`${paging.more}\``, () => button.click({ timeout: left() }));
      clicks++;
      if (!(await grew(listing, before, Math.min(GROWTH_WAIT_MS, left())))) break;
    }
    log(ctx, page, `clicked ${paging.more} ${clicks} time(s)`);
    return listing.read(false);
  }
  if (paging.scroll) {
    let scrolls = 0;
    while (scrolls < max) {
      outOfTime();
      const before = await attempt('counting the items', listing.count);
      await attempt('scrolling', async () => {
        await listing.revealLast();
        await evaluateIsolated(page, () => window.scrollTo(0, document.documentElement.scrollHeight));
      });
      scrolls++;
      if (!(await grew(listing, before, Math.min(GROWTH_WAIT_MS, left())))) break;
    }
    log(ctx, page, `scrolled ${scrolls} time(s)`);
    return listing.read(false);
  }
  const selector = paging.links as string;
  const address = (url: string) => url.split('#')[0] as string;
  const visited = new Set([address(page.url())]);
  const queue: string[] = [];
  const findLinks = async () => {
    const hrefs = await attempt(`reading the links \`${selector}\``, () =>
      evaluateMatches(page.locator(selector), (elements) =>
        elements.map((element) => (element instanceof HTMLAnchorElement ? element.href : element.closest('a')?.href) ?? null),
      ),
    );
    for (const href of hrefs) {
      if (!href || !/^https?:/i.test(href)) continue;
      const url = address(href);
      if (!visited.has(url) && !queue.includes(url)) queue.push(url);
    }
  };
  const pages = new Set<string>();
  const records: R[] = [];
  const add = (found: R[]) => {
    const key = JSON.stringify(found);
    if (pages.has(key)) return;
    pages.add(key);
    records.push(...found);
  };
  // A page the pager leads to may be past the listing's end: no match there is no records.
  const readLater = () =>
    listing.read(true).catch((error: unknown) => {
      if (error instanceof NodeError && error.code === 'not_found') return [];
      throw error;
    });
  add(await listing.read(false));
  await findLinks();
  let read = 1;
  while (queue.length && read < max) {
    outOfTime();
    const url = queue.shift() as string;
    visited.add(url);
    await attempt(`opening ${url}`, () => page.goto(url, { waitUntil: 'load', timeout: left() }));
    read++;
    add(await readLater());
    await findLinks();
  }
  log(ctx, page, `read ${read} page(s) of the listing, ${pages.size} with records of their own`);
  return records;
}

// ---- the nodes ------------------------------------------------------------------------------

/** The page's own URL scopes its cookies only when it is a web page. */
const WEB_URL = /^https?:\/\//i;

/** The PNG's size from its IHDR chunk. */
function pngSize(png: Buffer) {
  return png.length >= 24 ? { width: png.readUInt32BE(16), height: png.readUInt32BE(20) } : { width: 0, height: 0 };
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NodeError('timeout', `${what}: timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

const implementations = {
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
    // A string or a list of strings: the spec's check.
    const values = typeof value === 'string' ? [value] : (value as string[]);
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

  async 'extract.text'(page, inputs, ctx) {
    const left = budget(ctx);
    const { selector } = inputs;
    const locator = page.locator(selector);
    const texts = await readMatches(
      locator,
      inputs.optional,
      selector,
      left,
      () =>
        evaluateMatches(locator, (elements) =>
          // biome-ignore lint/performance/useDomNodeTextContent: the text as rendered (no hidden text or scripts) is what the node reads
          elements.map((element) => ((element as HTMLElement).innerText ?? element.textContent ?? '').trim()),
        ),
      (found) => found.length > 0,
    );
    log(ctx, page, `read the text of ${texts.length} element(s) matching ${selector}`);
    return { text: texts[0] ?? '', texts, count: texts.length };
  },

  async 'extract.attribute'(page, inputs, ctx) {
    const left = budget(ctx);
    const { selector, attribute, resolveUrl } = inputs;
    const locator = page.locator(selector);
    const values = await readMatches(
      locator,
      inputs.optional,
      selector,
      left,
      () =>
        evaluateMatches(
          locator,
          (elements, [name, resolve]) =>
            elements.map((element) => {
              const value = element.getAttribute(name);
              if (value === null || !resolve) return value;
              try {
                return new URL(value, document.baseURI).href;
              } catch {
                return value;
              }
            }),
          [attribute, resolveUrl] as const,
        ),
      (found) => found.length > 0,
    );
    log(ctx, page, `read ${attribute} of ${values.length} element(s) matching ${selector}`);
    return { value: values[0] ?? null, values, count: values.length };
  },

  async 'extract.html'(page, inputs, ctx) {
    const left = budget(ctx);
    const { selector, outer } = inputs;
    if (!selector) return { html: await attempt('reading the document', () => page.content()) };
    const locator = page.locator(selector);
    const html = await readMatches(
      locator,
      inputs.optional,
      selector,
      left,
      () =>
        evaluateMatches(
          locator,
          (elements, whole) => (elements[0] ? (whole ? elements[0].outerHTML : elements[0].innerHTML) : null),
          outer,
        ),
      (found) => found !== null,
    );
    return { html: html ?? '' };
  },

  async 'extract.list'(page, inputs, ctx) {
    const left = budget(ctx);
    const { selector } = inputs;
    // The shape the spec's check guarantees.
    const fields = inputs.fields as Record<string, string | { selector: string; attribute?: string; type?: CellType }>;
    const specs = Object.entries(fields).map(([name, spec]) => {
      const field = typeof spec === 'string' ? { selector: spec } : spec;
      return { name, selector: field.selector, attribute: field.attribute ?? null, type: field.type };
    });
    const { limit } = inputs;
    const locator = page.locator(selector);
    const readRows = (later: boolean) =>
      readMatches(
        locator,
        inputs.optional,
        selector,
        later ? () => Math.min(left(), LATER_PAGE_WAIT_MS) : left,
        () =>
          evaluateMatches(
            locator,
            (items, [fieldSpecs, max]) => ({
              matches: items.length,
              rows: items.slice(0, max ?? items.length).map((item) =>
                fieldSpecs.map((field) => {
                  const element = field.selector === '' || field.selector === '.' ? item : item.querySelector(field.selector);
                  if (!element) return null;
                  if (field.attribute) {
                    const value = element.getAttribute(field.attribute);
                    if (value === null || (field.attribute !== 'href' && field.attribute !== 'src')) return value;
                    try {
                      return new URL(value, document.baseURI).href;
                    } catch {
                      return value;
                    }
                  }
                  if (field.type === 'html') return element.innerHTML;
                  // biome-ignore lint/performance/useDomNodeTextContent: the text as rendered (no hidden text or scripts) is what the node reads
                  return ((element as HTMLElement).innerText ?? element.textContent ?? '').trim();
                }),
              ),
            }),
            [specs.map(({ selector: s, attribute, type }) => ({ selector: s, attribute, type: type ?? null })), limit ?? null] as const,
          ),
        (found) => found.matches > 0,
      );
    const rows = await readPaged(
      page,
      inputs.pages as Paging | undefined,
      {
        count: () => locator.count(),
        revealLast: () => evaluateMatches(locator, (items) => items.at(-1)?.scrollIntoView({ block: 'end' })),
        read: async (later) => (await readRows(later)).rows,
      },
      left,
      ctx,
    );
    const records = (limit === undefined ? rows : rows.slice(0, limit)).map((row) =>
      Object.fromEntries(specs.map((field, index) => [field.name, convertText(row[index] ?? null, field.type ?? 'string', false)])),
    );
    log(ctx, page, `extracted ${records.length} record(s) from ${selector}`);
    return { records, count: records.length };
  },

  async 'extract.table'(page, inputs, ctx) {
    const left = budget(ctx);
    const { selector } = inputs;
    const infer = inputs.inferTypes;
    // Shapes the spec's checks guarantee: a list of strings, and column → a cell type.
    const headersOverride = inputs.headers as string[] | undefined;
    const types = (inputs.types ?? {}) as Record<string, CellType>;
    const locator = page.locator(selector);
    const readTable = async (later: boolean) => {
      const read = await readMatches(
        locator,
        inputs.optional,
        selector,
        later ? () => Math.min(left(), LATER_PAGE_WAIT_MS) : left,
        () =>
          evaluateMatches(locator, (elements) => {
            const element = elements[0];
            if (!element) return { matched: false as const };
            if (!(element instanceof HTMLTableElement)) return { matched: true as const, table: null };
            // biome-ignore lint/performance/useDomNodeTextContent: the text as rendered (no hidden text or scripts) is what the node reads
            const text = (cell: Element) => ((cell as HTMLElement).innerText ?? cell.textContent ?? '').trim();
            // The page model (server/agents/page/collect/tables.ts) reads tables the same way, to name these keys.
            const rows = Array.from(element.rows);
            const headRows = element.tHead ? Array.from(element.tHead.rows) : [];
            const footRows = element.tFoot ? Array.from(element.tFoot.rows) : [];
            let header = headRows.at(-1);
            // Every tbody's rows, in order; a footer (totals) holds no records.
            let body = rows.filter((row) => !headRows.includes(row) && !footRows.includes(row));
            // A first row that starts with a row header (`<th scope=row>`) and holds data is no header row.
            const rowHeaded = (row: HTMLTableRowElement) =>
              row.cells[0]?.tagName === 'TH' && Array.from(row.cells).some((cell) => cell.tagName === 'TD');
            if (!header && body[0] && !rowHeaded(body[0])) {
              header = body[0];
              body = body.slice(1);
            }
            return {
              matched: true as const,
              table: {
                headers: header ? Array.from(header.cells).map(text) : [],
                // A record per row holding data: a group's heading row between tbodies (`<th colspan=3>`) is none.
                rows: body
                  .filter((row) => Array.from(row.cells).some((cell) => cell.tagName === 'TD'))
                  .map((row) => Array.from(row.cells).map(text)),
              },
            };
          }),
        (found) => found.matched,
      );
      if (!read.matched) return null;
      if (!read.table) throw new NodeInputError(`\`${selector}\` is not a <table>`);
      return read.table;
    };
    // The first page's header cells name the columns of every page.
    let headers: string[] | null = null;
    const rows = await readPaged(
      page,
      inputs.pages as Paging | undefined,
      {
        count: () => evaluateMatches(locator, (tables) => (tables[0] instanceof HTMLTableElement ? tables[0].rows.length : 0)),
        revealLast: () =>
          evaluateMatches(locator, (tables) => {
            if (tables[0] instanceof HTMLTableElement) tables[0].rows[tables[0].rows.length - 1]?.scrollIntoView({ block: 'end' });
          }),
        read: async (later) => {
          const table = await readTable(later);
          headers ??= table?.headers ?? null;
          return table?.rows ?? [];
        },
      },
      left,
      ctx,
    );
    if (headers === null && rows.length === 0) return { records: [], headers: [], count: 0 };
    const width = Math.max((headers as string[] | null)?.length ?? 0, ...rows.map((row) => row.length));
    const keys = uniqueKeys(headersOverride ?? headers ?? [], width);
    const records = rows.map((row) =>
      Object.fromEntries(keys.map((key, index) => [key, convertText(row[index] ?? null, types[key], infer)])),
    );
    log(ctx, page, `extracted ${records.length} row(s) from the table ${selector}`);
    return { records, headers: keys, count: records.length };
  },

  async 'page.screenshot'(page, inputs, ctx) {
    const left = budget(ctx);
    const { selector } = inputs;
    const png = selector
      ? await attempt(
          `capturing \`${selector}\``,
          () => page.locator(selector).first().screenshot({ type: 'png', timeout: left() }),
          'not_found',
        )
      : await attempt('capturing the page', () => page.screenshot({ type: 'png', fullPage: inputs.fullPage, timeout: left() }));
    const size = pngSize(png);
    const image = png.toString('base64');
    if (image.length > MAX_IMAGE_BASE64) {
      // Outputs travel through workflow history, where one payload may not pass 2 MB.
      throw new NodeError(
        'output_too_large',
        `The ${size.width}×${size.height} screenshot is ${(image.length / 1e6).toFixed(1)} MB as base64, more than the ${MAX_IMAGE_BASE64 / 1e6} MB a node's output can carry; capture one element (\`selector\`) or the viewport (\`fullPage: false\`)`,
        { retryable: false },
      );
    }
    log(ctx, page, `captured a ${size.width}×${size.height} screenshot`);
    return { image, ...size };
  },

  async 'page.cookies'(page, inputs, ctx) {
    // A list of strings: the spec's check.
    const urls = inputs.urls as string[] | undefined;
    const { name } = inputs;
    const pageUrl = page.url();
    const scope = urls ?? (WEB_URL.test(pageUrl) ? [pageUrl] : []);
    const all = await attempt('reading cookies', () => (scope.length ? page.context().cookies(scope) : page.context().cookies()));
    const cookies = all
      .filter((cookie) => name === undefined || cookie.name === name)
      .map(({ name: cookieName, value, domain, path, expires, httpOnly, secure, sameSite }) => ({
        name: cookieName,
        value,
        domain,
        path,
        expires,
        httpOnly,
        secure,
        sameSite,
      }));
    // Names only: cookie values are secrets.
    log(ctx, page, `read ${cookies.length} cookie(s)${cookies.length ? `: ${cookies.map((cookie) => cookie.name).join(', ')}` : ''}`);
    return { cookies, value: cookies[0]?.value ?? null };
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
} satisfies BrowserImplementations;

export const browserNodes: ReadonlyMap<string, CheckedBrowserNode> = new Map(
  // The one widening: executeNode calls each entry on inputs checked against its type's spec.
  Object.entries(implementations) as [string, CheckedBrowserNode][],
);
