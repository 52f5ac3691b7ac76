/**
 * The extract nodes' implementations (their specs: server/pipelines/engine/nodes/extract.ts): they
 * read a page (text, attributes, HTML, records, tables, a screenshot, cookies). One entry per type
 * of those specs; the table is assembled in ./browserNodes.ts.
 */
import { convertText, uniqueKeys } from '../../../pipelines/cellValues.ts';
import { NodeError, NodeInputError } from '../../../pipelines/engine/nodeErrors.ts';
import { evaluateMatches } from '../../page/isolatedWorld.ts';
import type { ImplementationsOf } from './browserNode.ts';
import { attempt, budget, log, readMatches } from './pageCalls.ts';
import { LATER_PAGE_WAIT_MS, readPaged } from './paging.ts';

/** The largest screenshot (base64) a node may answer: its outputs go through workflow history. */
const MAX_IMAGE_BASE64 = 1_500_000;

/** The page's own URL scopes its cookies only when it is a web page. */
const WEB_URL = /^https?:\/\//i;

/** The PNG's size from its IHDR chunk. */
function pngSize(png: Buffer) {
  return png.length >= 24 ? { width: png.readUInt32BE(16), height: png.readUInt32BE(20) } : { width: 0, height: 0 };
}

export const extractNodeImplementations = {
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
    const specs = Object.entries(inputs.fields).map(([name, spec]) => {
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
      inputs.pages,
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
    const headersOverride = inputs.headers;
    const types = inputs.types ?? {};
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
      inputs.pages,
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
    const { urls, name } = inputs;
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
} satisfies ImplementationsOf<'extract'>;
