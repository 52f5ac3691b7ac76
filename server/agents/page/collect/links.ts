import type { PageLink } from '../pageModel.ts';
import { nameOf } from './accessibleName.ts';
import { selectorOf } from './selector.ts';
import { visible } from './visible.ts';

/** The most links a page model lists outside navigation and the pager. */
export const MAX_LINKS = 60;

/** A link as the page model names it: its selector, its accessible name and its absolute address. */
export function linkOf(anchor: HTMLAnchorElement): PageLink {
  return { selector: selectorOf(anchor), text: nameOf(anchor), href: anchor.href };
}

/** The visible links in `root`, in document order, but those that run script (`javascript:`). */
export function visibleAnchors(root: ParentNode) {
  return [...root.querySelectorAll<HTMLAnchorElement>('a[href]')].filter(
    (anchor) => visible(anchor) && !anchor.href.startsWith('javascript:'),
  );
}

/** The page's named links outside its pager and its navigation (at most MAX_LINKS). */
export function readLinks(anchors: HTMLAnchorElement[], pager: Element | null, navigation: { links: PageLink[] }[]) {
  const navAnchors = new Set(navigation.flatMap((nav) => nav.links.map((link) => link.href + link.text)));
  return anchors
    .filter((anchor) => !pager?.contains(anchor))
    .map(linkOf)
    .filter((link) => link.text && !navAnchors.has(link.href + link.text))
    .slice(0, MAX_LINKS);
}
