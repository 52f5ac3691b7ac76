/**
 * The table of the browser and extract nodes' implementations, one file per category of their
 * specs (./browser.ts, ./extract.ts). It has one entry per type of those specs (but the one that
 * opens a page, which executeNode serves): a spec without its implementation does not compile.
 */
import type { Page } from 'playwright-core';
import { browserNodeImplementations } from './browser.ts';
import type { BrowserImplementations, BrowserNodeContext } from './browserNode.ts';
import { extractNodeImplementations } from './extract.ts';

/** How executeNode calls an implementation: by type, on inputs it checked against that type's spec. */
type CheckedBrowserNode = (page: Page, inputs: Record<string, unknown>, ctx: BrowserNodeContext) => Promise<Record<string, unknown>>;

const implementations = { ...browserNodeImplementations, ...extractNodeImplementations } satisfies BrowserImplementations;

export const browserNodes: ReadonlyMap<string, CheckedBrowserNode> = new Map(
  // The one widening: executeNode calls each entry on inputs checked against its type's spec.
  Object.entries(implementations) as [string, CheckedBrowserNode][],
);
