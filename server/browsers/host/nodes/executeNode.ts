/**
 * Runs one node: `executeNode(type, inputs, ctx)` → its outputs. The host activity calls it for
 * browser nodes (`spec.browser`); a data node goes to `executeDataNode` of the engine
 * (server/pipelines/engine/dataNodes.ts), which the control activity calls directly. Flow nodes
 * never come here: the interpreter runs them.
 *
 * Page handles. A `page` value is `{pageId: string}`, an opaque, JSON handle that travels
 * through the plan (and workflow history) in place of a live Page. Only the browser's host can
 * turn it into a Page, so the caller supplies the mapping:
 *
 *   - `openPage({newTab})` — the node that opens a page (`spec.opensPage`: `browser.page`) asks
 *     for a tab of the run's browser: its current tab (`context.pages()[0]`, or a new one if it
 *     has none) or, with `newTab`, a new one.
 *   - `newPageHandle(page)` — registers a Page for the run and answers its handle; `browser.page`
 *     returns it as its `page` output. RunPages (./runPages.ts) keys it by the path of the node that
 *     opened it (stable across retries) and drops it when the run ends.
 *   - `getPage(handle)` — every other browser node's `page` input is resolved through it
 *     (unless the caller passes `page` itself). An unknown handle should throw (e.g. the host
 *     restarted and the browser with it).
 *
 * Browser nodes answer the same handle as their `page` output: the tab is the same, the handle
 * only orders the side effects.
 *
 * Errors are NodeError (server/pipelines/engine/nodeErrors.ts): `code`, `retryable`, a message that
 * quotes no input value; NodeInputError (name `NodeInputError`) is never worth a retry.
 */
import type { Page } from 'playwright-core';
import type { NewLogEntry } from '../../../logs/logWriter.ts';
import { executeDataNode } from '../../../pipelines/engine/dataNodes.ts';
import { NodeError, NodeInputError } from '../../../pipelines/engine/nodeErrors.ts';
import { checkNodeInputs } from '../../../pipelines/engine/nodeInputs.ts';
import type { NodeTypeSpec, PageHandle } from '../../../pipelines/engine/nodes/spec.ts';
import { nodeRegistry } from '../../../pipelines/engine/registry.ts';
import type { NodeDownloads } from './browserNode.ts';
import { browserNodes } from './browserNodes.ts';

export { NodeError, NodeInputError } from '../../../pipelines/engine/nodeErrors.ts';
export type { PageHandle } from '../../../pipelines/engine/nodes/spec.ts';

export type NodeContext = {
  /** The live Page of `inputs.page`, when the caller resolved it already. */
  page?: Page;
  /** Resolves a page handle of this run to its live Page. Needed by browser nodes unless `page` is given. */
  getPage?: (handle: PageHandle) => Promise<Page>;
  /** Registers a Page for this run and answers its handle (browser.page). */
  newPageHandle?: (page: Page) => PageHandle;
  /** A tab of the run's browser (browser.page). */
  openPage?: (options: { newTab: boolean }) => Promise<Page>;
  /** The node's time budget in ms (its plan `timeoutMs`); Playwright's waits stay inside it. Default 30000. */
  timeoutMs?: number;
  /** Log lines of the node; they never carry input values. */
  log: (entry: NewLogEntry) => void;
  /** The run's browser's downloads (`page.download`). */
  downloads?: NodeDownloads;
};

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * The most a browser node may answer, as JSON characters: outputs travel through workflow
 * history, where one payload may not pass 2 MB (page.screenshot says so in its own words first).
 */
export const MAX_OUTPUT_CHARS = 1_600_000;

const stripNul = (text: string) => (text.includes('\u0000') ? text.replaceAll('\u0000', '') : text);

/** A JSON value with NUL characters removed from every string, keys included (a table header is page text). */
function withoutNul(value: unknown): unknown {
  if (typeof value === 'string') return stripNul(value);
  if (Array.isArray(value)) return value.map(withoutNul);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [stripNul(key), withoutNul(item)]));
  }
  return value;
}

/**
 * A browser node's outputs as they may be kept: page text loses its NUL characters, which
 * PostgreSQL refuses in jsonb and text (and which mark the run's placeholders and sealed values,
 * server/pipelines/engine/sealedValues.ts, so a page must not be able to write one), and outputs too
 * large for workflow history fail the node with `output_too_large` instead of the run's workflow.
 */
function keepable(spec: NodeTypeSpec, outputs: Record<string, unknown>) {
  const clean = withoutNul(outputs) as Record<string, unknown>;
  const size = JSON.stringify(clean).length;
  if (size > MAX_OUTPUT_CHARS) {
    throw new NodeError(
      'output_too_large',
      `${spec.type} answered ${(size / 1e6).toFixed(1)} MB of JSON, more than the ${MAX_OUTPUT_CHARS / 1e6} MB a node's output can carry; ${spec.outputTooLargeHint ?? 'read less'}`,
      { retryable: false },
    );
  }
  return clean;
}

export async function executeNode(type: string, rawInputs: Record<string, unknown>, ctx: NodeContext): Promise<Record<string, unknown>> {
  const spec = nodeRegistry.get(type);
  if (!spec?.browser) return executeDataNode(type, rawInputs);
  const { values: inputs, problem } = checkNodeInputs(spec, rawInputs);
  if (problem) throw new NodeInputError(problem.message);
  const timeoutMs = ctx.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  if (spec.opensPage) {
    if (!ctx.openPage || !ctx.newPageHandle)
      throw new NodeError('no_page', `${type} runs only where the run’s browser is`, { retryable: false });
    const page = await ctx.openPage({ newTab: inputs.newTab === true });
    ctx.log({
      context: page.url() || 'about:blank',
      severity: 'info',
      message: inputs.newTab ? 'opened a new tab' : 'using the browser’s tab',
      area: 'node',
    });
    return { page: ctx.newPageHandle(page) };
  }

  const handle = inputs.page as PageHandle;
  let page = ctx.page;
  if (!page) {
    if (!ctx.getPage) throw new NodeError('no_page', 'no page resolver was given', { retryable: false });
    try {
      page = await ctx.getPage(handle);
    } catch (error) {
      throw new NodeError('no_page', `the page ${handle.pageId} is gone (was the browser restarted?)`, { cause: error, retryable: false });
    }
  }
  if (page.isClosed()) throw new NodeError('no_page', `the page ${handle.pageId} was closed`, { retryable: false });
  const run = browserNodes.get(type);
  if (!run) throw new NodeError('unknown_type', `no implementation for ${type}`, { retryable: false });
  const outputs = await run(page, inputs, { timeoutMs, log: ctx.log, downloads: ctx.downloads });
  return { page: handle, ...keepable(spec, outputs) };
}
