/**
 * The node registry: the one description of every node type. It feeds the compiler (inputs,
 * outputs, refTypes), the JSON Schema of a source, the catalog (`GET …/pipelines/nodes`), the
 * executor (server/browsers/host/nodes/executeNode.ts maps each type to its implementation) and the
 * generation model's instructions, and docs/pipeline-language.md is rendered from it.
 *
 * Pure data and pure functions: workflows import it, so no Node built-ins and no playwright.
 */
import type { Plan, PlanStep } from './plan.ts';
import { type RefType, refTypeDescriptions, refTypes } from './refTypes.ts';

export type InputSpec = {
  refType: RefType;
  required: boolean;
  /** Put into the plan when the input is not given. */
  default?: unknown;
  /** For string inputs: the only literals accepted. */
  enum?: readonly string[];
  /** For number inputs: bounds of a literal (and of the value at run time). */
  min?: number;
  max?: number;
  /**
   * When the node runs, an empty string counts as not given (a required selector, URL, key or
   * script cannot be ""). Not checked on literals: the compiler accepts "" as it always has.
   */
  nonEmpty?: boolean;
  /** A rule beyond the refType, enum and bounds: the problem with a value, or null. Checked on literals and at run time. */
  check?: (value: unknown) => string | null;
  description: string;
};

export type OutputSpec = { refType: RefType; description: string };

export type BlockSpec = {
  description: string;
  required: boolean;
  /** What nodes inside the block may reference as `<flow node>.<name>`. */
  inner: Record<string, OutputSpec & { onlyWithInput?: string }>;
};

export type NodeTypeSpec = {
  type: string;
  title: string;
  description: string;
  category: 'browser' | 'extract' | 'flow' | 'data';
  /** Runs against a browser page (on the browser's host); otherwise a pure computation. */
  browser: boolean;
  inputs: Record<string, InputSpec>;
  outputs: Record<string, OutputSpec & { onlyWithInput?: string }>;
  /** At least one of these inputs must be given. */
  oneOf?: readonly string[];
  /** Inputs with free names are allowed, of this type (e.g. the variables of `text.template`). */
  extraInputs?: { refType: RefType; description: string };
  /** Sub-graphs the node takes, by the key that holds them on the node. */
  blocks?: Record<string, BlockSpec>;
  /**
   * How a block's declared outputs appear among the node's outputs: `list` collects one value
   * per iteration (flow.forEach); `value` passes the taken branch's value, null if it has none.
   */
  blockOutputs?: 'list' | 'value';
  /** The per-attempt time limit put into the plan when the node sets no `timeoutMs`. */
  defaultTimeoutMs?: number;
  /**
   * Its outputs hold the browser's cookie values: a run of a plan with such a node needs, and
   * shows its outputs only to, callers who may read the session's cookies.
   */
  readsCookies?: boolean;
  /** A small, complete source that uses the node. */
  example: Record<string, unknown>;
};

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const isStringList = (value: unknown) => Array.isArray(value) && value.every((item) => typeof item === 'string');

/** http(s) pages only (and about:blank): never file:, chrome: or javascript: on a shared host. */
const ALLOWED_URL = /^(https?:\/\/|about:blank$)/i;

/** The load states a browser node's `waitFor` may wait for after its action. */
export const NAVIGATION_STATES = ['none', 'load', 'domcontentloaded', 'networkidle'] as const;

const BROWSER_TIMEOUT_MS = 30_000;
const DATA_TIMEOUT_MS = 10_000;

const pageIn: InputSpec = {
  refType: 'page',
  required: true,
  description: 'The page to act on (from `browser.page` or the previous browser node).',
};
const pageOut: OutputSpec = { refType: 'page', description: 'The same page, after this node; wire it into the next browser node.' };
const selectorIn = (what: string): InputSpec => ({
  refType: 'string',
  required: true,
  nonEmpty: true,
  description: `CSS selector (or any Playwright selector, e.g. \`text=Sign in\`) of ${what}.`,
});
const waitForIn: InputSpec = {
  refType: 'string',
  required: false,
  default: 'none',
  enum: NAVIGATION_STATES,
  description:
    '`none`: do not wait for a navigation. `load`, `domcontentloaded`, `networkidle`: the action starts a navigation; wait until the new document reaches that state.',
};
const waitForSelectorIn: InputSpec = {
  refType: 'string',
  required: false,
  description: 'After the action (and its navigation, if any), wait until an element matching this selector is visible.',
};
const indexIn: InputSpec = {
  refType: 'number',
  required: false,
  default: 0,
  min: 0,
  description: 'Which match to use when the selector matches several elements (0 = the first).',
};
const optionalIn: InputSpec = {
  refType: 'boolean',
  required: false,
  default: false,
  description: 'When true, no match is not an error: the node answers empty values at once instead of waiting for the selector.',
};

/** Every example starts from the run's page. */
const withPage = (nodes: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  nodes: { page: { type: 'browser.page' }, ...nodes },
  ...extra,
});
const open = (url: string) => ({ type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url } });

const specs: NodeTypeSpec[] = [
  {
    type: 'browser.page',
    title: 'The run’s page',
    description:
      'Obtains a tab of the browser the run uses: the browser’s current tab, or a new one with `newTab`. Every chain of browser nodes starts here.',
    category: 'browser',
    browser: true,
    inputs: {
      newTab: { refType: 'boolean', required: false, default: false, description: 'Open a new tab instead of using the current one.' },
    },
    outputs: { page: { refType: 'page', description: 'The tab, for the next browser node.' } },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    example: { nodes: { page: { type: 'browser.page' } } },
  },
  {
    type: 'page.goto',
    title: 'Go to a URL',
    description:
      'Navigates the page to a URL and waits until the document reaches `waitUntil`. An HTTP error status is not a failure; read `status`.',
    category: 'browser',
    browser: true,
    inputs: {
      page: pageIn,
      url: {
        refType: 'string',
        required: true,
        nonEmpty: true,
        check: (value) => (ALLOWED_URL.test(String(value)) ? null : 'url must be an absolute http(s) URL (or about:blank)'),
        description: 'Absolute URL (http or https).',
      },
      waitUntil: {
        refType: 'string',
        required: false,
        default: 'load',
        enum: ['load', 'domcontentloaded', 'networkidle', 'commit'],
        description: 'When the navigation counts as done.',
      },
    },
    outputs: {
      page: pageOut,
      url: { refType: 'string', description: 'The URL after redirects.' },
      status: {
        refType: 'number',
        description: 'HTTP status of the main document (0 when there was no response, e.g. same-document navigation).',
      },
    },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    example: withPage({ open: open('https://example.com/') }),
  },
  {
    type: 'page.click',
    title: 'Click',
    description:
      'Clicks an element once it is visible, stable and enabled. With `waitFor` it also waits for the navigation the click starts; with `waitForSelector` for an element to appear afterwards.',
    category: 'browser',
    browser: true,
    inputs: {
      page: pageIn,
      selector: selectorIn('the element to click'),
      index: indexIn,
      waitFor: waitForIn,
      waitForSelector: waitForSelectorIn,
    },
    outputs: { page: pageOut },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    example: withPage({
      open: open('https://example.com/'),
      more: { type: 'page.click', inputs: { page: { $ref: 'open.page' }, selector: 'a', waitFor: 'load' } },
    }),
  },
  {
    type: 'page.fill',
    title: 'Fill a field',
    description:
      'Clears an input, textarea or contenteditable element and types a value into it. Secret parameters are fine here: values are never logged.',
    category: 'browser',
    browser: true,
    inputs: {
      page: pageIn,
      selector: selectorIn('the field'),
      value: { refType: 'string', required: true, description: 'The text to enter.' },
      index: indexIn,
    },
    outputs: { page: pageOut },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    example: withPage(
      {
        open: open('https://example.com/login'),
        user: { type: 'page.fill', inputs: { page: { $ref: 'open.page' }, selector: '#user', value: { $param: 'user' } } },
      },
      { parameters: { user: { refType: 'string' } } },
    ),
  },
  {
    type: 'page.press',
    title: 'Press a key',
    description:
      'Presses a key or a chord (`Enter`, `Tab`, `Control+A`, `ArrowDown`) in a focused element, or in the page when no selector is given. `waitFor` works as in `page.click` (e.g. Enter submitting a form).',
    category: 'browser',
    browser: true,
    inputs: {
      page: pageIn,
      key: {
        refType: 'string',
        required: true,
        nonEmpty: true,
        description: 'A key name as Playwright names them, e.g. `Enter` or `Shift+Tab`.',
      },
      selector: {
        refType: 'string',
        required: false,
        description: 'Focus this element first; without it the key goes to the focused element.',
      },
      waitFor: waitForIn,
      waitForSelector: waitForSelectorIn,
    },
    outputs: { page: pageOut },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    example: withPage({
      open: open('https://example.com/search'),
      query: { type: 'page.fill', inputs: { page: { $ref: 'open.page' }, selector: 'input[name=q]', value: 'shoes' } },
      submit: { type: 'page.press', inputs: { page: { $ref: 'query.page' }, selector: 'input[name=q]', key: 'Enter', waitFor: 'load' } },
    }),
  },
  {
    type: 'page.select',
    title: 'Choose in a select',
    description: 'Selects options of a `<select>` by value or by label. A list selects several options of a `multiple` select.',
    category: 'browser',
    browser: true,
    inputs: {
      page: pageIn,
      selector: selectorIn('the `<select>`'),
      value: {
        refType: 'json',
        required: true,
        check: (value) =>
          typeof value === 'string' || isStringList(value) ? null : 'value is an option’s value or label, or a list of them',
        description: 'An option’s value or label, or a list of them.',
      },
    },
    outputs: { page: pageOut, selected: { refType: 'list', description: 'The values of the options now selected.' } },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    example: withPage({
      open: open('https://example.com/form'),
      country: { type: 'page.select', inputs: { page: { $ref: 'open.page' }, selector: 'select#country', value: 'Norway' } },
    }),
  },
  {
    type: 'page.wait',
    title: 'Wait',
    description:
      'Waits for an element (`selector` reaching `state`), a load state, a URL, or a fixed time. Give at least one; several are awaited in that order.',
    category: 'browser',
    browser: true,
    inputs: {
      page: pageIn,
      selector: { refType: 'string', required: false, description: 'Wait for an element matching this selector.' },
      state: {
        refType: 'string',
        required: false,
        default: 'visible',
        enum: ['visible', 'attached', 'hidden', 'detached'],
        description: 'The state the `selector` element must reach.',
      },
      loadState: {
        refType: 'string',
        required: false,
        enum: ['load', 'domcontentloaded', 'networkidle'],
        description: 'Wait until the current document reaches this load state.',
      },
      url: { refType: 'string', required: false, description: 'Wait until the page’s URL matches this glob (`**/orders*`) or equals it.' },
      ms: { refType: 'number', required: false, min: 0, max: 60_000, description: 'Wait this many milliseconds (at most 60000).' },
    },
    oneOf: ['selector', 'loadState', 'url', 'ms'],
    outputs: { page: pageOut },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    example: withPage({
      open: open('https://example.com/'),
      ready: { type: 'page.wait', inputs: { page: { $ref: 'open.page' }, selector: '#results li' } },
    }),
  },
  {
    type: 'page.scroll',
    title: 'Scroll',
    description:
      'Scrolls an element into view, or the window to the top or bottom or by a number of pixels, `times` times with `delayMs` between (for lists that load more as you scroll).',
    category: 'browser',
    browser: true,
    inputs: {
      page: pageIn,
      selector: { refType: 'string', required: false, description: 'Scroll this element into view (the other inputs are then ignored).' },
      to: {
        refType: 'string',
        required: false,
        default: 'bottom',
        enum: ['bottom', 'top'],
        description: 'Where to scroll the window when `by` is not given.',
      },
      by: {
        refType: 'number',
        required: false,
        check: (value) => (Math.abs(value as number) <= 1_000_000 ? null : '`by` must be a number from -1000000 to 1000000'),
        description: 'Scroll the window by this many pixels (negative: up).',
      },
      times: { refType: 'number', required: false, default: 1, min: 1, max: 100, description: 'How often to scroll (1 to 100).' },
      delayMs: {
        refType: 'number',
        required: false,
        default: 250,
        min: 0,
        max: 10_000,
        description: 'Pause after each scroll, for content to load.',
      },
    },
    outputs: {
      page: pageOut,
      scrollY: { refType: 'number', description: 'The window’s vertical scroll offset afterwards.' },
      scrollHeight: { refType: 'number', description: 'The document’s scroll height afterwards.' },
    },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    example: withPage({
      open: open('https://example.com/feed'),
      more: { type: 'page.scroll', inputs: { page: { $ref: 'open.page' }, times: 3, delayMs: 500 } },
    }),
  },
  {
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
    example: withPage(
      { open: open('https://example.com/'), heading: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: 'h1' } } },
      { outputs: { heading: { $ref: 'heading.text' } } },
    ),
  },
  {
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
    example: withPage({
      open: open('https://example.com/'),
      links: { type: 'extract.attribute', inputs: { page: { $ref: 'open.page' }, selector: 'a', attribute: 'href', resolveUrl: true } },
    }),
  },
  {
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
    example: withPage({
      open: open('https://example.com/'),
      body: { type: 'extract.html', inputs: { page: { $ref: 'open.page' }, selector: 'main', outer: false } },
    }),
  },
  {
    type: 'extract.list',
    title: 'Extract a list of records',
    description:
      'One record per element matching `selector` (an item), with a field per entry of `fields`: field name → a selector inside the item (its text), or `{selector, attribute?, type?}`. An empty selector or "." is the item itself; `type` is string (default), number, boolean or html; `attribute` reads an attribute (href and src resolved to absolute URLs).',
    category: 'extract',
    browser: true,
    inputs: {
      page: pageIn,
      selector: selectorIn('each item'),
      fields: {
        refType: 'record',
        required: true,
        check: (value) => {
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
        },
        description: 'Field name → selector, or → `{selector, attribute?, type?}`. A field whose selector matches nothing is null.',
      },
      limit: { refType: 'number', required: false, min: 0, description: 'At most this many records.' },
      optional: optionalIn,
    },
    outputs: {
      page: pageOut,
      records: { refType: 'list', description: 'The records, in document order.' },
      count: { refType: 'number', description: 'How many records.' },
    },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    example: withPage({
      open: open('https://example.com/products'),
      products: {
        type: 'extract.list',
        inputs: {
          page: { $ref: 'open.page' },
          selector: '.product',
          fields: { name: 'h2', price: { selector: '.price', type: 'number' }, url: { selector: 'a', attribute: 'href' } },
        },
      },
    }),
  },
  {
    type: 'extract.table',
    title: 'Extract a table',
    description:
      'Reads an HTML `<table>` into records keyed by its header cells (`<thead>` or the first row; `headers` overrides them). Cells become numbers, booleans or null when they look like it (`"1,234.50"` → 1234.5, `"true"`, ""), unless `types` says otherwise per column (string, number, boolean).',
    category: 'extract',
    browser: true,
    inputs: {
      page: pageIn,
      selector: selectorIn('the table'),
      headers: {
        refType: 'list',
        required: false,
        check: (value) => (isStringList(value) ? null : 'headers is a list of strings'),
        description: 'Record keys to use instead of the header cells, in column order.',
      },
      types: {
        refType: 'record',
        required: false,
        check: (value) => {
          if (!isPlainObject(value)) return 'types is a record of column → string, number or boolean';
          const bad = Object.entries(value).find(([, type]) => !['string', 'number', 'boolean'].includes(type as string));
          return bad ? `column \`${bad[0]}\`: the type must be string, number or boolean` : null;
        },
        description: 'Column key → `string`, `number` or `boolean`; others are inferred.',
      },
      inferTypes: {
        refType: 'boolean',
        required: false,
        default: true,
        description: 'Infer numbers, booleans and nulls; false keeps every cell a string.',
      },
      optional: optionalIn,
    },
    outputs: {
      page: pageOut,
      records: { refType: 'list', description: 'One record per body row.' },
      headers: { refType: 'list', description: 'The record keys, in column order.' },
      count: { refType: 'number', description: 'How many records.' },
    },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    example: withPage(
      {
        open: open('https://example.com/orders'),
        orders: { type: 'extract.table', inputs: { page: { $ref: 'open.page' }, selector: 'table#orders', types: { Order: 'string' } } },
      },
      { outputs: { orders: { $ref: 'orders.records' } } },
    ),
  },
  {
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
  },
  {
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
        check: (value) => (isStringList(value) ? null : 'urls is a list of strings'),
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
  },
  {
    type: 'page.evaluate',
    title: 'Run a script in the page',
    description:
      'Runs `script` in the page as the body of an async function with `arg` in scope; what it `return`s (JSON-serialisable; undefined becomes null) is `result`. A thrown error fails the node. A script can read `document.cookie`, so, as with `page.cookies`, starting the run needs `cookies.read` on the session and only callers with it see the run’s outputs.',
    category: 'browser',
    browser: true,
    // A script can return `document.cookie`.
    readsCookies: true,
    inputs: {
      page: pageIn,
      script: { refType: 'string', required: true, nonEmpty: true, description: 'A function body, e.g. `return document.title`.' },
      arg: { refType: 'json', required: false, description: 'A JSON value the script sees as `arg`.' },
    },
    outputs: { page: pageOut, result: { refType: 'json', description: 'The returned value.' } },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    example: withPage({
      open: open('https://example.com/'),
      count: {
        type: 'page.evaluate',
        inputs: { page: { $ref: 'open.page' }, script: 'return document.querySelectorAll(arg).length', arg: 'a' },
      },
    }),
  },
  {
    type: 'flow.condition',
    title: 'Condition',
    description:
      'Tests `value` with `operator` (and `operand`) and runs the `then` or the `else` sub-graph. Each sub-graph is `{nodes, outputs}`; its declared outputs become outputs of this node (null when the branch taken does not declare it; both branches must agree on types). Nodes inside may reference outer nodes and `<this node>.page`.',
    category: 'flow',
    browser: false,
    inputs: {
      value: { refType: 'json', required: true, description: 'The value to test.' },
      operator: {
        refType: 'string',
        required: false,
        default: 'truthy',
        enum: ['truthy', 'falsy', 'equals', 'notEquals', 'contains', 'matches', 'greaterThan', 'lessThan', 'empty', 'notEmpty'],
        description:
          '`truthy`/`falsy` (false, null, 0, "", [] and {} are falsy), `equals`/`notEquals` (deep), `contains` (substring, list element or record key), `matches` (`operand` is an RE2 regular expression, matched in linear time: no backreferences or lookaround; at most 1000 characters, tested against at most 100000), `greaterThan`/`lessThan` (numbers), `empty`/`notEmpty`.',
      },
      operand: { refType: 'json', required: false, description: 'What `value` is compared with.' },
      page: { refType: 'page', required: false, description: 'A page the branches act on; they reference it as `<this node>.page`.' },
    },
    outputs: {
      matched: { refType: 'boolean', description: 'Whether the test held.' },
      branch: { refType: 'string', description: '`then` or `else`.' },
      page: { refType: 'page', description: 'The page, after the branch (only when `page` is given).', onlyWithInput: 'page' },
    },
    blocks: {
      // biome-ignore lint/suspicious/noThenProperty: a condition's `then` sub-graph is data, never a thenable
      then: {
        description: 'Runs when the test holds.',
        required: false,
        inner: { page: { refType: 'page', description: 'The page given to the condition.', onlyWithInput: 'page' } },
      },
      else: {
        description: 'Runs when it does not.',
        required: false,
        inner: { page: { refType: 'page', description: 'The page given to the condition.', onlyWithInput: 'page' } },
      },
    },
    blockOutputs: 'value',
    example: withPage({
      open: open('https://example.com/'),
      banner: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: '#cookie-banner', optional: true } },
      consent: {
        type: 'flow.condition',
        inputs: { value: { $ref: 'banner.count' }, operator: 'greaterThan', operand: 0, page: { $ref: 'banner.page' } },
        // biome-ignore lint/suspicious/noThenProperty: a condition's `then` sub-graph is data, never a thenable
        then: {
          nodes: { accept: { type: 'page.click', inputs: { page: { $ref: 'consent.page' }, selector: '#cookie-banner button' } } },
        },
      },
    }),
  },
  {
    type: 'flow.forEach',
    title: 'For each',
    description:
      'Runs the `body` sub-graph once per element of `items`, in order. Inside, `<this node>.item`, `.index` and `.page` are the current element, its index and the page. Each output the body declares becomes a list (one value per element) among this node’s outputs; `results` has one record of them per element.',
    category: 'flow',
    browser: false,
    inputs: {
      items: { refType: 'list', required: true, description: 'The elements to loop over.' },
      page: { refType: 'page', required: false, description: 'A page the body acts on, as `<this node>.page`.' },
      maxItems: { refType: 'number', required: false, min: 0, description: 'Loop over at most this many elements.' },
    },
    outputs: {
      results: { refType: 'list', description: 'One record per element with the body’s declared outputs.' },
      count: { refType: 'number', description: 'How many times the body ran.' },
      page: { refType: 'page', description: 'The page after the loop (only when `page` is given).', onlyWithInput: 'page' },
    },
    blocks: {
      body: {
        description: 'The nodes run per element, and `outputs` collected from each run.',
        required: true,
        inner: {
          item: { refType: 'json', description: 'The current element.' },
          index: { refType: 'number', description: 'Its position, from 0.' },
          page: { refType: 'page', description: 'The page given to the loop.', onlyWithInput: 'page' },
        },
      },
    },
    blockOutputs: 'list',
    example: withPage(
      {
        open: open('https://example.com/'),
        links: {
          type: 'extract.attribute',
          inputs: { page: { $ref: 'open.page' }, selector: 'nav a', attribute: 'href', resolveUrl: true },
        },
        visit: {
          type: 'flow.forEach',
          inputs: { items: { $ref: 'links.values' }, page: { $ref: 'links.page' }, maxItems: 5 },
          body: {
            nodes: {
              go: { type: 'page.goto', inputs: { page: { $ref: 'visit.page' }, url: { $ref: 'visit.item' } } },
              title: { type: 'extract.text', inputs: { page: { $ref: 'go.page' }, selector: 'h1' } },
            },
            outputs: { title: { $ref: 'title.text' } },
          },
        },
      },
      { outputs: { titles: { $ref: 'visit.title' } } },
    ),
  },
  {
    type: 'text.template',
    title: 'Template',
    description:
      'Fills `{{name}}` placeholders in `template` from the node’s other inputs (any names you choose); `{{name.path.0}}` reaches into JSON. Objects and lists are written as JSON, null as "".',
    category: 'data',
    browser: false,
    inputs: { template: { refType: 'string', required: true, description: 'Text with `{{placeholders}}`.' } },
    extraInputs: { refType: 'json', description: 'Each other input is a variable of the template.' },
    outputs: { text: { refType: 'string', description: 'The filled-in text.' } },
    defaultTimeoutMs: DATA_TIMEOUT_MS,
    example: {
      parameters: { query: { refType: 'string' } },
      nodes: {
        url: { type: 'text.template', inputs: { template: 'https://example.com/search?q={{q}}', q: { $param: 'query' } } },
        page: { type: 'browser.page' },
        open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: { $ref: 'url.text' } } },
      },
    },
  },
  {
    type: 'json.pick',
    title: 'Pick from JSON',
    description:
      'The value at `path` in a JSON value: dot-separated keys and list indexes (`data.items.0.name`, or `data.items[0].name`). Missing → `default`.',
    category: 'data',
    browser: false,
    inputs: {
      value: { refType: 'json', required: true, description: 'The JSON to pick from.' },
      path: { refType: 'string', required: true, description: 'Keys and indexes; "" is the value itself.' },
      default: { refType: 'json', required: false, default: null, description: 'What a missing path gives.' },
    },
    outputs: {
      value: { refType: 'json', description: 'The value found (or `default`).' },
      found: { refType: 'boolean', description: 'Whether the path existed.' },
    },
    defaultTimeoutMs: DATA_TIMEOUT_MS,
    example: withPage({
      open: open('https://example.com/'),
      state: { type: 'page.evaluate', inputs: { page: { $ref: 'open.page' }, script: 'return window.__STATE__' } },
      user: { type: 'json.pick', inputs: { value: { $ref: 'state.result' }, path: 'user.name' } },
    }),
  },
  {
    type: 'list.flatten',
    title: 'Flatten a list',
    description:
      'Joins a list of lists into one list, one level deep (other elements are kept as they are): e.g. the records a `flow.forEach` collected from every page of a paged table.',
    category: 'data',
    browser: false,
    inputs: { list: { refType: 'list', required: true, description: 'A list whose elements are lists.' } },
    outputs: {
      list: { refType: 'list', description: 'The elements of the inner lists, in order.' },
      count: { refType: 'number', description: 'How many elements.' },
    },
    defaultTimeoutMs: DATA_TIMEOUT_MS,
    example: withPage(
      {
        open: open('https://example.com/orders'),
        pages: {
          type: 'extract.attribute',
          inputs: { page: { $ref: 'open.page' }, selector: '.pagination a', attribute: 'href', resolveUrl: true },
        },
        each: {
          type: 'flow.forEach',
          inputs: { items: { $ref: 'pages.values' }, page: { $ref: 'pages.page' } },
          body: {
            nodes: {
              go: { type: 'page.goto', inputs: { page: { $ref: 'each.page' }, url: { $ref: 'each.item' } } },
              rows: { type: 'extract.table', inputs: { page: { $ref: 'go.page' }, selector: 'table' } },
            },
            outputs: { records: { $ref: 'rows.records' } },
          },
        },
        all: { type: 'list.flatten', inputs: { list: { $ref: 'each.records' } } },
      },
      { outputs: { orders: { $ref: 'all.list' } } },
    ),
  },
  {
    type: 'json.object',
    title: 'Build a record',
    description:
      'A record whose fields are the node’s inputs (any names you choose); for shaping outputs or building a value for a script or template.',
    category: 'data',
    browser: false,
    inputs: {},
    extraInputs: { refType: 'json', description: 'Each input becomes a field of the record.' },
    outputs: { record: { refType: 'record', description: 'The record.' } },
    defaultTimeoutMs: DATA_TIMEOUT_MS,
    example: withPage(
      {
        open: open('https://example.com/'),
        title: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: 'h1' } },
        summary: { type: 'json.object', inputs: { title: { $ref: 'title.text' }, url: { $ref: 'open.url' } } },
      },
      { outputs: { summary: { $ref: 'summary.record' } } },
    ),
  },
];

export const nodeRegistry: ReadonlyMap<string, NodeTypeSpec> = new Map(specs.map((spec) => [spec.type, spec]));

export const nodeTypes = specs.map((spec) => spec.type);

export function nodeSpec(type: string): NodeTypeSpec | undefined {
  return nodeRegistry.get(type);
}

/** Whether a plan (in any of its sub-graphs) has a node that reads the browser's cookies. */
export function planReadsCookies(plan: Plan | null): boolean {
  const readsCookies = (step: PlanStep): boolean =>
    nodeRegistry.get(step.type)?.readsCookies === true || Object.values(step.blocks ?? {}).some((block) => block.steps.some(readsCookies));
  return plan?.steps.some(readsCookies) ?? false;
}

/** The catalog, as `GET …/pipelines/nodes` answers it. JSON only. */
export function nodeCatalog() {
  return {
    refTypes: refTypes.map((name) => ({ name, description: refTypeDescriptions[name] })),
    nodes: specs.map((spec) => ({
      type: spec.type,
      title: spec.title,
      description: spec.description,
      category: spec.category,
      browser: spec.browser,
      inputs: Object.fromEntries(
        Object.entries(spec.inputs).map(([name, { check: _check, nonEmpty: _nonEmpty, ...input }]) => [name, input]),
      ),
      outputs: Object.fromEntries(Object.entries(spec.outputs).map(([name, output]) => [name, { ...output }])),
      ...(spec.oneOf ? { oneOf: [...spec.oneOf] } : {}),
      ...(spec.extraInputs ? { extraInputs: { ...spec.extraInputs } } : {}),
      ...(spec.blocks ? { blocks: spec.blocks, blockOutputs: spec.blockOutputs } : {}),
      ...(spec.defaultTimeoutMs ? { defaultTimeoutMs: spec.defaultTimeoutMs } : {}),
      example: spec.example,
    })),
  };
}

export type NodeCatalog = ReturnType<typeof nodeCatalog>;

/** JSON on one line, with spaces: `{ "a": [1, 2] }`. */
function inlineJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(inlineJson).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}: ${inlineJson(item)}`);
    return entries.length ? `{ ${entries.join(', ')} }` : '{}';
  }
  return JSON.stringify(value);
}

/** A source as people write it: one line per node, parameter and output. */
export function formatSource(source: Record<string, unknown>): string {
  const sections = Object.entries(source).map(([key, value]) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return `  ${JSON.stringify(key)}: ${inlineJson(value)}`;
    const lines = Object.entries(value).map(([name, item]) => `    ${JSON.stringify(name)}: ${inlineJson(item)}`);
    return `  ${JSON.stringify(key)}: {\n${lines.join(',\n')}\n  }`;
  });
  return `{\n${sections.join(',\n')}\n}`;
}

const code = (text: string) => `\`${text.replace(/\|/g, '\\|')}\``;
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/**
 * The node reference in Markdown: docs/pipeline-language.md embeds it between markers, and the
 * generation model reads the same text.
 */
export function renderNodeReference() {
  const lines: string[] = [];
  for (const spec of specs) {
    lines.push(`### ${code(spec.type)} — ${spec.title}`, '', spec.description, '');
    lines.push(`${spec.browser ? 'Browser node (runs on the browser’s host).' : 'Pure node (no browser).'}`, '');
    if (Object.keys(spec.inputs).length || spec.extraInputs) {
      lines.push('| input | refType | required | default | description |', '|---|---|---|---|---|');
      for (const [name, input] of Object.entries(spec.inputs)) {
        const range = input.min !== undefined || input.max !== undefined ? ` (${input.min ?? ''}–${input.max ?? ''})` : '';
        const type = input.enum ? `${input.refType}: ${input.enum.map((v) => code(v)).join(', ')}` : `${input.refType}${range}`;
        const fallback = input.default === undefined ? '' : code(JSON.stringify(input.default));
        lines.push(`| ${code(name)} | ${type} | ${input.required ? 'yes' : 'no'} | ${fallback} | ${cell(input.description)} |`);
      }
      if (spec.extraInputs)
        lines.push(`| _any other name_ | ${spec.extraInputs.refType} | no |  | ${cell(spec.extraInputs.description)} |`);
      lines.push('');
    }
    if (spec.oneOf) lines.push(`Give at least one of ${spec.oneOf.map((name) => code(name)).join(', ')}.`, '');
    for (const [key, block] of Object.entries(spec.blocks ?? {})) {
      const inner = Object.entries(block.inner)
        .map(([name, output]) => `${code(`<node>.${name}`)} (${output.refType})`)
        .join(', ');
      lines.push(`Sub-graph ${code(key)}${block.required ? ' (required)' : ''}: ${block.description} Inside it: ${inner}.`, '');
    }
    lines.push('| output | refType | description |', '|---|---|---|');
    for (const [name, output] of Object.entries(spec.outputs))
      lines.push(`| ${code(name)} | ${output.refType} | ${cell(output.description)} |`);
    if (spec.blockOutputs === 'list') lines.push('| _each body output_ | list | One value per element. |');
    if (spec.blockOutputs === 'value') lines.push('| _each branch output_ | its type | The taken branch’s value, or null. |');
    lines.push('', 'Example:', '', '```json', formatSource(spec.example), '```', '');
  }
  return lines.join('\n');
}
