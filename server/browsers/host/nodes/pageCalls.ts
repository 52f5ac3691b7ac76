/**
 * How a browser node calls Playwright. Playwright's own waits are bounded by what is left of the
 * node's time budget, so a node fails with its own error ("no element matches …") before the
 * activity's timeout cuts it off; Playwright's errors become NodeErrors that quote only their
 * first line (the call log may quote inputs).
 */
import type { Locator, Page } from 'playwright-core';
import type { NewLogEntry } from '../../../logs/logWriter.ts';
import { NodeError } from '../../../pipelines/engine/nodeErrors.ts';
import type { NAVIGATION_STATES } from '../../../pipelines/engine/nodes/parts.ts';
import type { BrowserNodeContext } from './browserNode.ts';

/** The time left of the node's budget, at least 1 ms (0 would mean "no timeout" to Playwright). */
export function budget(ctx: BrowserNodeContext) {
  const deadline = Date.now() + ctx.timeoutMs;
  return () => Math.max(1, deadline - Date.now());
}

export const firstLine = (message: string) => message.split('\n')[0]?.trim() ?? '';

const isTimeout = (error: unknown) => error instanceof Error && error.name === 'TimeoutError';

/** Playwright's error as a NodeError: only the first line (the call log may quote inputs). */
function failure(error: unknown, what: string, timeoutCode: 'timeout' | 'not_found' = 'timeout'): NodeError {
  if (error instanceof NodeError) return error;
  if (isTimeout(error)) return new NodeError(timeoutCode, `${what}: timed out`, { cause: error });
  const message = error instanceof Error ? firstLine(error.message) : String(error);
  return new NodeError('browser_error', `${what}: ${message}`, { cause: error });
}

export async function attempt<T>(what: string, run: () => Promise<T>, timeoutCode: 'timeout' | 'not_found' = 'timeout'): Promise<T> {
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
export async function readMatches<T>(
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
export async function actAndWait(
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

export const log = (ctx: BrowserNodeContext, page: Page, message: string, severity: NewLogEntry['severity'] = 'info') =>
  ctx.log({ context: page.url() || 'about:blank', severity, message, area: 'node' });

/** `promise`, or a `timeout` NodeError once `ms` have passed. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
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
