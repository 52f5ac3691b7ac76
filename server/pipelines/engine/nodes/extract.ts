/**
 * The extract nodes: they read a page (text, attributes, HTML, records, tables, a screenshot,
 * cookies). Like the browser nodes, they run on the browser's host: each spec's implementation is
 * the entry of its type in server/browsers/host/nodes/extract.ts.
 */
import { BROWSER_TIMEOUT_MS, isPlainObject, isStringList, open, optionalIn, pageIn, pageOut, selectorIn, withPage } from './parts.ts';
import { type InputSpec, nodeSpec, shapedCheck } from './spec.ts';

/** Pages a `links` paging visits at most (the start page included) unless it says `max`. */
export const PAGING_MAX_PAGES = 50;

/** A checked `pages` value: exactly one of `links`, `more` and `scroll`, and perhaps `max`. */
export type Paging = { links?: string; more?: string; scroll?: true; max?: number };

/** A cell's type in `extract.list`'s `fields` (and, but html, in `extract.table`'s `types`). */
type FieldType = 'string' | 'number' | 'boolean' | 'html';

/** The problem with a `pages` value, or null: the one rule the compiler and the host share. */
export function pagingProblem(value: unknown): string | null {
  const shape = 'pages is {links: selector, max?}, {more: selector, max?} or {scroll: true, max?}';
  if (!isPlainObject(value)) return shape;
  const kinds = ['links', 'more', 'scroll'].filter((kind) => kind in value);
  if (kinds.length !== 1 || Object.keys(value).some((key) => !['links', 'more', 'scroll', 'max'].includes(key))) return shape;
  if ('links' in value && (typeof value.links !== 'string' || !value.links)) return 'pages.links is the selector of the pager links';
  if ('more' in value && (typeof value.more !== 'string' || !value.more)) return 'pages.more is the selector of the "more" button';
  if ('scroll' in value && value.scroll !== true) return 'pages.scroll is true';
  if ('max' in value && (!Number.isInteger(value.max) || (value.max as number) < 1 || (value.max as number) > 1000))
    return 'pages.max is a whole number from 1 to 1000';
  return null;
}

/** `pages` of extract.table and extract.list: how to read a listing past what the page shows now. */
const pagesIn = {
  refType: 'record',
  required: false,
  check: shapedCheck<Paging>(pagingProblem),
  description: `Read every page of a paged listing and join the records. \`{links: selector}\`: from this page, follow the links the selector matches (numbered, "next", "older"), each address once, collecting new links on each page, until none are new or \`max\` pages (default ${PAGING_MAX_PAGES}) are read; a page whose records equal an earlier page's adds nothing. \`{more: selector}\`: click that "Load more"/"Show more" button until it is gone, disabled or adds nothing (at most \`max\` clicks), then read once. \`{scroll: true}\`: scroll to the bottom until nothing more loads (at most \`max\` times), then read once. The \`page\` output is the page after paging.`,
} as const satisfies InputSpec;

export const extractNodeSpecs = [
  nodeSpec({
    type: 'extract.text',
    title: 'Extract text',
    description:
      'The visible text (innerText, trimmed) of the elements matching a selector: the first as `text`, all as `texts`. Waits for the first match unless `optional`.',
    category: 'extract',
    browser: true,
    inputs: { page: pageIn, selector: selectorIn('the elements'), optional: optionalIn },
    outputs: {
      page: pageOut,
      text: { refType: 'string', description: 'Text of the first match ("" when there is none).' },
      texts: { refType: 'list', description: 'Texts of all matches, in document order.' },
      count: { refType: 'number', description: 'How many elements matched.' },
    },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    outputTooLargeHint: 'narrow the `selector`',
    example: withPage(
      { open: open('https://example.com/'), heading: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: 'h1' } } },
      { outputs: { heading: { $ref: 'heading.text' } } },
    ),
  }),
  nodeSpec({
    type: 'extract.attribute',
    title: 'Extract an attribute',
    description:
      'An attribute of the elements matching a selector: the first as `value`, all as `values` (null where absent). With `resolveUrl`, relative URLs (href, src) become absolute.',
    category: 'extract',
    browser: true,
    inputs: {
      page: pageIn,
      selector: selectorIn('the elements'),
      attribute: { refType: 'string', required: true, nonEmpty: true, description: 'Attribute name, e.g. `href`.' },
      resolveUrl: { refType: 'boolean', required: false, default: false, description: 'Resolve the values against the page’s URL.' },
      optional: optionalIn,
    },
    outputs: {
      page: pageOut,
      value: { refType: 'string', description: 'The first match’s value (null when absent).' },
      values: { refType: 'list', description: 'Every match’s value.' },
      count: { refType: 'number', description: 'How many elements matched.' },
    },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    outputTooLargeHint: 'narrow the `selector`',
    example: withPage({
      open: open('https://example.com/'),
      links: { type: 'extract.attribute', inputs: { page: { $ref: 'open.page' }, selector: 'a', attribute: 'href', resolveUrl: true } },
    }),
  }),
  nodeSpec({
    type: 'extract.html',
    title: 'Extract HTML',
    description:
      'The HTML of the first element matching a selector (outer HTML, or inner with `outer: false`), or of the whole document without a selector.',
    category: 'extract',
    browser: true,
    inputs: {
      page: pageIn,
      selector: { refType: 'string', required: false, description: 'The element; without it, the whole document.' },
      outer: { refType: 'boolean', required: false, default: true, description: 'Include the element’s own tag.' },
      optional: optionalIn,
    },
    outputs: { page: pageOut, html: { refType: 'html', description: 'The markup ("" when nothing matched and `optional`).' } },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    outputTooLargeHint: 'read one element (`selector`) instead of the whole document',
    example: withPage({
      open: open('https://example.com/'),
      body: { type: 'extract.html', inputs: { page: { $ref: 'open.page' }, selector: 'main', outer: false } },
    }),
  }),
  nodeSpec({
    type: 'extract.list',
    title: 'Extract a list of records',
    description:
      'One record per element matching `selector` (an item), with a field per entry of `fields`: field name → a selector inside the item (its text), or `{selector, attribute?, type?}`. An empty selector or "." is the item itself; `type` is string (default), number, boolean or html; `attribute` reads an attribute (href and src resolved to absolute URLs). With `pages`, the items of every page of a paged listing (pager links, a "more" button, infinite scroll).',
    category: 'extract',
    browser: true,
    inputs: {
      page: pageIn,
      selector: selectorIn('each item'),
      fields: {
        refType: 'record',
        required: true,
        check: shapedCheck<Record<string, string | { selector: string; attribute?: string; type?: FieldType }>>((value) => {
          if (!isPlainObject(value) || Object.keys(value).length === 0) return 'fields is a non-empty record of field name → selector';
          for (const [field, spec] of Object.entries(value)) {
            if (typeof spec === 'string') continue;
            const ok =
              isPlainObject(spec) &&
              typeof spec.selector === 'string' &&
              Object.keys(spec).every((key) => ['selector', 'attribute', 'type'].includes(key)) &&
              (spec.attribute === undefined || typeof spec.attribute === 'string') &&
              (spec.type === undefined || ['string', 'number', 'boolean', 'html'].includes(spec.type as string));
            if (!ok) return `field \`${field}\` must be a selector or {selector, attribute?, type?: string|number|boolean|html}`;
          }
          return null;
        }),
        description: 'Field name → selector, or → `{selector, attribute?, type?}`. A field whose selector matches nothing is null.',
      },
      limit: { refType: 'number', required: false, min: 0, description: 'At most this many records.' },
      pages: pagesIn,
      optional: optionalIn,
    },
    outputs: {
      page: pageOut,
      records: { refType: 'list', description: 'The records, in document order.' },
      count: { refType: 'number', description: 'How many records.' },
    },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    outputTooLargeHint: 'narrow the `selector` or set a `limit`',
    example: withPage({
      open: open('https://example.com/products'),
      products: {
        type: 'extract.list',
        inputs: {
          page: { $ref: 'open.page' },
          selector: '.product',
          fields: { name: 'h2', price: { selector: '.price', type: 'number' }, url: { selector: 'a', attribute: 'href' } },
          pages: { more: 'button.load-more' },
        },
      },
    }),
  }),
  nodeSpec({
    type: 'extract.table',
    title: 'Extract a table',
    description:
      'Reads an HTML `<table>` into records keyed by its header cells (`<thead>` or the first row; `headers` overrides them): one record per row holding a data cell, across every `<tbody>` (the heading row of a group and the `<tfoot>` are left out; a first row that starts with a row header `<th scope=row>` is data, not the header). Cells become numbers, booleans or null when they look like it (`"1,234.50"` → 1234.5, `"true"`, ""), unless `types` says otherwise per column (string, number, boolean). With `pages`, the rows of every page of a paged table, joined.',
    category: 'extract',
    browser: true,
    inputs: {
      page: pageIn,
      selector: selectorIn('the table'),
      headers: {
        refType: 'list',
        required: false,
        check: shapedCheck<string[]>((value) => (isStringList(value) ? null : 'headers is a list of strings')),
        description: 'Record keys to use instead of the header cells, in column order.',
      },
      types: {
        refType: 'record',
        required: false,
        check: shapedCheck<Record<string, Exclude<FieldType, 'html'>>>((value) => {
          if (!isPlainObject(value)) return 'types is a record of column → string, number or boolean';
          const bad = Object.entries(value).find(([, type]) => !['string', 'number', 'boolean'].includes(type as string));
          return bad ? `column \`${bad[0]}\`: the type must be string, number or boolean` : null;
        }),
        description: 'Column key → `string`, `number` or `boolean`; others are inferred.',
      },
      inferTypes: {
        refType: 'boolean',
        required: false,
        default: true,
        description: 'Infer numbers, booleans and nulls; false keeps every cell a string.',
      },
      pages: pagesIn,
      optional: optionalIn,
    },
    outputs: {
      page: pageOut,
      records: { refType: 'list', description: 'One record per body row.' },
      headers: { refType: 'list', description: 'The record keys, in column order.' },
      count: { refType: 'number', description: 'How many records.' },
    },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    outputTooLargeHint: 'narrow the `selector` to a smaller table',
    example: withPage(
      {
        open: open('https://example.com/orders'),
        orders: {
          type: 'extract.table',
          inputs: { page: { $ref: 'open.page' }, selector: 'table#orders', types: { Order: 'string' }, pages: { links: 'nav.pager a' } },
          timeoutMs: 120000,
        },
      },
      { outputs: { orders: { $ref: 'orders.records' } } },
    ),
  }),
  nodeSpec({
    type: 'page.screenshot',
    title: 'Screenshot',
    description: 'A PNG of the viewport, the full page, or one element; at most 1.5 MB as base64 (larger fails with `output_too_large`).',
    category: 'extract',
    browser: true,
    inputs: {
      page: pageIn,
      selector: { refType: 'string', required: false, description: 'Capture only this element.' },
      fullPage: {
        refType: 'boolean',
        required: false,
        default: false,
        description: 'Capture the whole scrollable page, not just the viewport.',
      },
    },
    outputs: {
      page: pageOut,
      image: { refType: 'image', description: 'The PNG, base64.' },
      width: { refType: 'number', description: 'Width in pixels.' },
      height: { refType: 'number', description: 'Height in pixels.' },
    },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    example: withPage({
      open: open('https://example.com/'),
      shot: { type: 'page.screenshot', inputs: { page: { $ref: 'open.page' }, fullPage: true } },
    }),
  }),
  nodeSpec({
    type: 'page.cookies',
    title: 'Read cookies',
    description:
      'The browser’s cookies for the page’s URL (or for `urls`), optionally only those called `name`. Cookie values are secrets: they never appear in logs.',
    category: 'extract',
    browser: true,
    readsCookies: true,
    inputs: {
      page: pageIn,
      urls: {
        refType: 'list',
        required: false,
        check: shapedCheck<string[]>((value) => (isStringList(value) ? null : 'urls is a list of strings')),
        description: 'Cookies for these URLs instead of the page’s; an empty list means all cookies.',
      },
      name: { refType: 'string', required: false, description: 'Only cookies with this name.' },
    },
    outputs: {
      page: pageOut,
      cookies: { refType: 'list', description: 'Records `{name, value, domain, path, expires, httpOnly, secure, sameSite}`.' },
      value: { refType: 'string', description: 'The first cookie’s value (null when none).' },
    },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    example: withPage({
      open: open('https://example.com/'),
      session: { type: 'page.cookies', inputs: { page: { $ref: 'open.page' }, name: 'session' } },
    }),
  }),
];
