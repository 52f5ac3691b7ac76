/**
 * The browser host's read of a page model: the in-page code of ./collect/, put together as one
 * function, runs in the host's isolated world of the page, so the page's own script never sees it.
 */
import type { Page } from 'playwright-core';
import { evaluateIsolated } from '../../browsers/page/isolatedWorld.ts';
import { inPage } from './collect/inPage.ts';
import type { PageModel } from './pageModel.ts';

const collect = inPage(({ collectPageModel }) => collectPageModel());

/** Reads the page model of `page` (at most a few hundred elements of each kind), in the host's isolated world. */
export async function readPageModel(page: Page): Promise<PageModel> {
  return evaluateIsolated(page, collect);
}
