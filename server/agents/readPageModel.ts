import type { Page } from 'playwright-core';
import { evaluateIsolated } from '../browsers/page/isolatedWorld.ts';
import { collectPageModel, type PageModel } from './pageModel.ts';

const MAX_LINKS = 60;
const MAX_TEXT = 80;

/** Reads the page model of `page` (at most a few hundred elements of each kind), in the host's isolated world. */
export async function readPageModel(page: Page): Promise<PageModel> {
  return evaluateIsolated(page, collectPageModel, { maxLinks: MAX_LINKS, maxText: MAX_TEXT });
}
