/**
 * The browser nodes: they act on a page (navigate, click, type, wait, run a script). Each spec's
 * implementation is the entry of its type in server/browsers/host/nodes/browser.ts, which
 * runs on the browser's host: the engine keeps only the specs, so workflows never load playwright.
 */
import {
  BROWSER_TIMEOUT_MS,
  indexIn,
  isStringList,
  open,
  pageIn,
  pageOut,
  selectorIn,
  waitForIn,
  waitForSelectorIn,
  withPage,
} from './parts.ts';
import { nodeSpec, shapedCheck } from './spec.ts';

/** http(s) pages only (and about:blank): never file:, chrome: or javascript: on a shared host. */
const ALLOWED_URL = /^(https?:\/\/|about:blank$)/i;

export const browserNodeSpecs = [
  nodeSpec({
    type: 'browser.page',
    title: 'The run’s page',
    description:
      'Obtains a tab of the browser the run uses: the browser’s current tab, or a new one with `newTab`. Every chain of browser nodes starts here.',
    category: 'browser',
    browser: true,
    opensPage: true,
    inputs: {
      newTab: { refType: 'boolean', required: false, default: false, description: 'Open a new tab instead of using the current one.' },
    },
    outputs: { page: { refType: 'page', description: 'The tab, for the next browser node.' } },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    example: { nodes: { page: { type: 'browser.page' } } },
  }),
  nodeSpec({
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
  }),
  nodeSpec({
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
  }),
  nodeSpec({
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
  }),
  nodeSpec({
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
  }),
  nodeSpec({
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
        check: shapedCheck<string | string[]>((value) =>
          typeof value === 'string' || isStringList(value) ? null : 'value is an option’s value or label, or a list of them',
        ),
        description: 'An option’s value or label, or a list of them.',
      },
    },
    outputs: { page: pageOut, selected: { refType: 'list', description: 'The values of the options now selected.' } },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    example: withPage({
      open: open('https://example.com/form'),
      country: { type: 'page.select', inputs: { page: { $ref: 'open.page' }, selector: 'select#country', value: 'Norway' } },
    }),
  }),
  nodeSpec({
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
  }),
  nodeSpec({
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
  }),
  nodeSpec({
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
    outputTooLargeHint: 'return less from the script',
    example: withPage({
      open: open('https://example.com/'),
      count: {
        type: 'page.evaluate',
        inputs: { page: { $ref: 'open.page' }, script: 'return document.querySelectorAll(arg).length', arg: 'a' },
      },
    }),
  }),
  nodeSpec({
    type: 'page.download',
    title: 'Download a file',
    description:
      'Clicks `selector` (a link with `download`, a button whose script builds the file) or opens `url` (a response with `Content-Disposition: attachment`), one of the two, then waits, within the node’s timeout, for the file the page downloads. The file lands in the browser’s own folder, is kept with the session’s browser (listed, fetched and deleted at `…/sessions/{sessionId}/{resourceId}/downloads`, for DOWNLOAD_RETENTION_DAYS) and `file` refers to it: `{id, name, size, mimeType, url}`, where `url` serves the bytes. A download cancelled past DOWNLOAD_MAX_BYTES fails the node.',
    category: 'browser',
    browser: true,
    inputs: {
      page: pageIn,
      selector: { ...selectorIn('the element whose click starts the download'), required: false },
      index: indexIn,
      url: {
        refType: 'string',
        required: false,
        nonEmpty: true,
        check: (value) => (/^https?:\/\//i.test(String(value)) ? null : 'url must be an absolute http(s) URL'),
        description: 'Absolute URL (http or https) whose response is the file; instead of `selector`.',
      },
    },
    oneOf: ['selector', 'url'],
    // Said once: at `url` when it is written as a literal, else at `selector`.
    checkLiteral: (name, _value, inputs) =>
      (name === 'url' && inputs.selector !== undefined) ||
      (name === 'selector' && inputs.url !== undefined && typeof inputs.url !== 'string')
        ? 'give `selector` or `url`, not both'
        : null,
    outputs: {
      page: pageOut,
      file: {
        refType: 'record',
        description: 'The file kept: `{id, name, size, mimeType, url}`; `url` serves its bytes to readers of the session.',
      },
    },
    defaultTimeoutMs: BROWSER_TIMEOUT_MS,
    example: withPage({
      open: open('https://example.com/reports'),
      report: { type: 'page.download', inputs: { page: { $ref: 'open.page' }, selector: 'a#export-csv' } },
    }),
  }),
];
