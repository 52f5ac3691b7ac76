/**
 * The walk through a listing that goes on past what the page shows (a pager, a "more" button, an
 * infinite scroll), decided from page models alone: the browser host's `walk_listing` tool takes
 * every step of it in one call (server/browsers/host/agentTools.ts), so a listing of many pages
 * spends one step of an analysis's budget, not one per page or click.
 */
import type { Paging } from '../proposal.ts';
import type { PageModel } from './pageModel.ts';

/** The pages (or loads, or scrolls) one walk reads at most. */
export const MAX_WALK_PAGES = 40;

/** What the walk does next. */
export type WalkStep = { kind: 'navigate'; url: string } | { kind: 'click'; selector: string } | { kind: 'scroll' };

/** The item count of each table and list of `base`, as `page` shows them. */
function listingCounts(base: PageModel, page: PageModel) {
  return [
    ...base.tables.map((table) => page.tables.find((other) => other.selector === table.selector)?.rowCount ?? 0),
    ...base.lists.map((list) => page.lists.find((other) => other.itemSelector === list.itemSelector)?.count ?? 0),
  ];
}
const grewFrom = (base: PageModel, before: PageModel, after: PageModel) => {
  const was = listingCounts(base, before);
  return listingCounts(base, after).some((count, index) => count > (was[index] ?? 0));
};

/**
 * The next step of the walk through the listing of `base` (the page the steps lead to), given the
 * page models read after each step so far (`seen`): the pager's next page (the "next" link, else the
 * first numbered page not read yet) until there is none; the "more" button until it is gone or adds
 * nothing; the bottom of the page until scrolling adds nothing. `next` is null when the walk is
 * done (or `stop`: the last step failed, or the walk reached its bound); `paging` is what the
 * extraction step says, once the walk showed it works.
 */
export function nextWalkStep(base: PageModel, seen: readonly PageModel[], stop = false): { next: WalkStep | null; paging?: Paging } {
  const latest = seen[seen.length - 1] ?? base;
  const pagination = base.pagination;
  const done = (paging?: Paging) => ({ next: null, ...(paging ? { paging } : {}) });
  if (!pagination) return done();
  const paging = (): Paging =>
    pagination.kind === 'scroll'
      ? { kind: 'scroll' }
      : { kind: pagination.kind, ...(pagination.selector ? { selector: pagination.selector } : {}) };
  const anyGrowth = seen.some((page, index) => grewFrom(base, seen[index - 1] ?? base, page));
  if (seen.length >= MAX_WALK_PAGES || stop)
    return done((pagination.kind === 'links' ? seen.length > 0 : anyGrowth) ? paging() : undefined);
  if (pagination.kind === 'links') {
    if (!pagination.selector) return done();
    // Pages are known by address and by the number the pager shows as current; a start page that
    // shows neither as such is page 1 (the "1" link on later pages leads back to it).
    const read = [base, ...seen];
    const addresses = new Set(read.map((page) => page.url.split('#')[0]));
    const numbers = new Set(read.map((page) => page.pagination?.current).filter((number): number is string => Boolean(number)));
    // (Its own address only: a page read later is in `addresses` too, and is not the start.)
    const startNumber = base.pagination?.pages.find((link) => link.href.split('#')[0] === base.url.split('#')[0])?.text;
    if (!base.pagination?.current && !startNumber) numbers.add('1');
    const unread = (link: { href: string; text: string } | null | undefined) =>
      Boolean(
        link && /^https?:/.test(link.href) && !addresses.has(link.href.split('#')[0]) && !numbers.has(link.text.replace(/^page /i, '')),
      );
    const onwards = latest.pagination?.kind === 'links' ? latest.pagination : null;
    const next = onwards && (unread(onwards.next) ? onwards.next : onwards.pages.find(unread));
    if (!next) return done(read.length > 1 ? paging() : undefined);
    return { next: { kind: 'navigate', url: next.href } };
  }
  // more and scroll: go on while the last step made the listing grow; page only if one did.
  const grew = seen.length === 0 || grewFrom(base, seen[seen.length - 2] ?? base, latest);
  if (!grew) return done(anyGrowth ? paging() : undefined);
  if (pagination.kind === 'more') {
    const button = latest.pagination?.kind === 'more' ? latest.pagination.selector : undefined;
    if (!button) return done(anyGrowth ? paging() : undefined);
    return { next: { kind: 'click', selector: button } };
  }
  return { next: { kind: 'scroll' } };
}

/** A page model with only what the walk's pages add: the listings, the pager and the address. */
export function walkPage(model: PageModel): PageModel {
  return {
    url: model.url,
    title: model.title,
    headings: [],
    forms: [],
    buttons: [],
    links: [],
    navigation: [],
    pagination: model.pagination,
    tables: model.tables,
    lists: model.lists,
    details: [],
  };
}
