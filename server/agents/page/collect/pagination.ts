import type { PagePagination } from '../pageModel.ts';
import { nameOf } from './accessibleName.ts';
import { linkOf, visibleAnchors } from './links.ts';
import { bare, MORE_WORD, NEXT_WORD, NUMBER_WORD, pagerWord } from './pagerWords.ts';
import { selectorOf } from './selector.ts';
import { within } from './selectorText.ts';
import { visible } from './visible.ts';

/**
 * How the listing goes on. A pager: the container whose links are all page numbers or next/previous
 * words, the one holding most of them (then the innermost); else a lone `rel=next` or "Older stories"
 * link; else a "Load more"/"Show more" button; else, on a listing taller than the window, scroll.
 * `pager` and `control` (the pager, the lone link or the button) are no part of the listing's items.
 */
export function readPagination(anchors: HTMLAnchorElement[]): {
  pagination: PagePagination | null;
  pager: Element | null;
  control: Element | null;
} {
  const pager = findPager();
  if (pager) return { pagination: pagerLinks(pager), pager, control: pager };
  const relNext = anchors.filter((anchor) => /\bnext\b/i.test(anchor.rel));
  const lone = relNext[0] ?? loneNextLink(anchors);
  const more = moreButton();
  const control = lone ?? more ?? null;
  if (lone) {
    const selector = relNext.length === 1 && lone === relNext[0] ? 'a[rel~=next]' : selectorOf(lone);
    return { pagination: { kind: 'links', selector, current: null, pages: [], next: linkOf(lone) }, pager, control };
  }
  if (more) return { pagination: { kind: 'more', selector: selectorOf(more), current: null, pages: [], next: null }, pager, control };
  if (document.documentElement.scrollHeight > window.innerHeight + 50 && document.querySelector('table, ul, ol, article, [role=list]'))
    return { pagination: { kind: 'scroll', current: null, pages: [], next: null }, pager, control };
  return { pagination: null, pager, control };
}

/** A link onwards: `rel=next`, or a text such as "Next" or "Older posts". */
export function isNext(anchor: HTMLAnchorElement) {
  return /\bnext\b/i.test(anchor.rel) || NEXT_WORD.test(bare(anchor.textContent ?? ''));
}

/** An element outside links whose text is a page number: the current page of a pager. */
export function plainNumber(element: Element) {
  return !element.closest('a') && !element.querySelector('a') && NUMBER_WORD.test(bare(element.textContent ?? ''));
}

/** The visible container whose links are all pager words and that pages (numbers, or a link onwards): most links first, then fewest elements. */
export function findPager() {
  const candidates = [
    ...document.querySelectorAll('nav, [role=navigation], [class*=pag], [aria-label*=pag i], [data-testid*=pag i], ul, ol, div, p'),
  ].filter((container) => {
    if (!visible(container)) return false;
    const links = visibleAnchors(container);
    if (!links.length || !links.every((link) => pagerWord(link.textContent ?? ''))) return false;
    const numbered = links.filter((link) => NUMBER_WORD.test(bare(link.textContent ?? '')));
    const current = [...container.querySelectorAll('span, strong, em, b, li, [aria-current]')].some(plainNumber);
    return numbered.length >= 2 || (numbered.length >= 1 && current) || links.some(isNext);
  });
  return (
    candidates.sort(
      (a, b) => visibleAnchors(b).length - visibleAnchors(a).length || a.querySelectorAll('*').length - b.querySelectorAll('*').length,
    )[0] ?? null
  );
}

/** A pager's links: its numbered pages, the one shown as current (`aria-current`, plain text, or the link to this address), and the next. */
export function pagerLinks(pager: Element): PagePagination {
  const links = visibleAnchors(pager);
  const numbered = links.filter((link) => NUMBER_WORD.test(bare(link.textContent ?? '')));
  const here = location.href.split('#')[0];
  const currentElement =
    pager.querySelector('[aria-current]:not([aria-current=false])') ??
    [...pager.querySelectorAll('span, strong, em, b, li')].find(plainNumber) ??
    numbered.find((link) => link.href.split('#')[0] === here) ??
    null;
  const next = links.find(isNext);
  return {
    kind: 'links',
    selector: within(selectorOf(pager), 'a[href]'),
    current: currentElement ? bare(currentElement.textContent ?? '').replace(/^page /i, '') : null,
    pages: numbered.map(linkOf),
    next: next ? linkOf(next) : null,
  };
}

/**
 * A link onwards on its own: "Next", "Older stories", or a "More" that loads another page. A text
 * every item of a list repeats ("more" on each card) leads to the items' pages, not onwards.
 */
export function loneNextLink(anchors: HTMLAnchorElement[]) {
  const sameText = (anchor: HTMLAnchorElement) =>
    anchors.filter((other) => bare(other.textContent ?? '') === bare(anchor.textContent ?? '')).length;
  return anchors.find(
    (anchor) =>
      !anchor.closest('nav, header, footer') &&
      sameText(anchor) === 1 &&
      !/^#|^javascript:/.test(anchor.getAttribute('href') ?? '') &&
      (NEXT_WORD.test(bare(anchor.textContent ?? '')) || /^more$/i.test(bare(anchor.textContent ?? ''))),
  );
}

/** A visible, enabled "Load more"/"Show more" control outside navigation and forms (a link only when it leads nowhere). */
export function moreButton() {
  return [...document.querySelectorAll('button, [role=button], input[type=button], a')]
    .filter((element) => visible(element) && !element.closest('nav, header, footer, form'))
    .filter(
      (element) => !(element instanceof HTMLAnchorElement) || !element.href || /#|javascript:/.test(element.getAttribute('href') ?? '#'),
    )
    .find((element) => MORE_WORD.test(bare(nameOf(element))) && !(element as HTMLButtonElement).disabled);
}
