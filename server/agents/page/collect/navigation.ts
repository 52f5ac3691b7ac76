import type { PageModel } from '../pageModel.ts';
import { linkOf } from './links.ts';
import { selectorOf } from './selector.ts';
import { clean } from './text.ts';
import { visible } from './visible.ts';

/** The page's visible navigation landmarks but its pager (at most 5), with their visible links (at most 20 each). */
export function readNavigation(pager: Element | null): PageModel['navigation'] {
  return [...document.querySelectorAll('nav, [role=navigation]')]
    .filter((nav) => visible(nav) && nav !== pager && !nav.contains(pager ?? null))
    .slice(0, 5)
    .map((nav) => ({
      selector: selectorOf(nav),
      label: clean(nav.getAttribute('aria-label') ?? ''),
      links: [...nav.querySelectorAll<HTMLAnchorElement>('a[href]')].filter(visible).slice(0, 20).map(linkOf),
    }));
}
