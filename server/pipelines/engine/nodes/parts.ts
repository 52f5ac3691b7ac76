/**
 * Pieces several node specs share: the page ports, the common inputs of browser nodes, the
 * default timeouts and the helpers the examples are written with. `as const` keeps their literal
 * types, which `InputsOf` reads (a shared input stays required, or keeps its enum, in every spec
 * that uses it).
 */
import type { InputSpec, OutputSpec } from './spec.ts';

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

export const isStringList = (value: unknown) => Array.isArray(value) && value.every((item) => typeof item === 'string');

/** The load states a browser node's `waitFor` may wait for after its action. */
export const NAVIGATION_STATES = ['none', 'load', 'domcontentloaded', 'networkidle'] as const;

export const BROWSER_TIMEOUT_MS = 30_000;
export const DATA_TIMEOUT_MS = 10_000;

export const pageIn = {
  refType: 'page',
  required: true,
  description: 'The page to act on (from `browser.page` or the previous browser node).',
} as const satisfies InputSpec;
export const pageOut = {
  refType: 'page',
  description: 'The same page, after this node; wire it into the next browser node.',
} as const satisfies OutputSpec;
export const selectorIn = (what: string) =>
  ({
    refType: 'string',
    required: true,
    nonEmpty: true,
    description: `CSS selector (or any Playwright selector, e.g. \`text=Sign in\`) of ${what}.`,
  }) as const satisfies InputSpec;
export const waitForIn = {
  refType: 'string',
  required: false,
  default: 'none',
  enum: NAVIGATION_STATES,
  description:
    '`none`: do not wait for a navigation. `load`, `domcontentloaded`, `networkidle`: the action starts a navigation; wait until the new document reaches that state.',
} as const satisfies InputSpec;
export const waitForSelectorIn = {
  refType: 'string',
  required: false,
  description: 'After the action (and its navigation, if any), wait until an element matching this selector is visible.',
} as const satisfies InputSpec;
export const indexIn = {
  refType: 'number',
  required: false,
  default: 0,
  min: 0,
  description: 'Which match to use when the selector matches several elements (0 = the first).',
} as const satisfies InputSpec;
export const optionalIn = {
  refType: 'boolean',
  required: false,
  default: false,
  description: 'When true, no match is not an error: the node answers empty values at once instead of waiting for the selector.',
} as const satisfies InputSpec;

/** Every example starts from the run's page. */
export const withPage = (nodes: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  nodes: { page: { type: 'browser.page' }, ...nodes },
  ...extra,
});
export const open = (url: string) => ({ type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url } });
