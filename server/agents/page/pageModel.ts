/**
 * The page model: a deterministic, compact description of a live page that every model gets as a
 * tool and that the `builtin` proposer works from. It lists what a pipeline can act on (forms and
 * their inputs, buttons, links, navigation and pagination) and what it can extract (tables,
 * repeated lists, headings), each with a stable selector: a test id, an id, a name, a role with its
 * name, then text. Input values are never read: only whether an input holds one.
 *
 * The browser host reads it with `readPageModel` (./readPageModel.ts), which runs the in-page code
 * of ./collect/ in the page; the model side reads only these types and `pageModelSelectors`.
 */

export type ElementRef = { selector: string; text: string };
export type FormInput = {
  selector: string;
  label: string;
  type: string;
  name: string | null;
  required: boolean;
  /** Whether it holds a value now; the value itself is never read. */
  filled: boolean;
  /** A select's options (the page's own text, at most 40), so that one the request names can be chosen. */
  options?: { value: string; text: string }[];
};
export type PageForm = { selector: string; purpose: 'login' | 'search' | 'other'; inputs: FormInput[]; submit: ElementRef[] };
export type PageLink = ElementRef & { href: string };
/**
 * `headers`: the keys `extract.table` gives each record (the last row of `<thead>`, else a first row
 * that is no data row; blanks as `column<n>`, repeats with `_2`). `rowCount`: its data rows, across
 * every `<tbody>` (group rows and `<tfoot>` left out). `heading`: what names it on the page (its
 * aria-label, or the nearest heading before it).
 */
export type PageTable = {
  selector: string;
  caption: string | null;
  heading: string | null;
  headers: string[];
  rowCount: number;
  /** The link every data row holds in one column (a row's own page), and the first row's address. */
  linkSelector?: string;
  linkSample?: string;
};
export type ListField = { name: string; selector: string; attribute?: string; sample: string };
/** `linkSelector`: the link of each item (when items have one), e.g. to visit every item's page. */
export type PageList = {
  selector: string;
  itemSelector: string;
  count: number;
  fields: ListField[];
  linkSelector?: string;
  /** What names the list on the page: its aria-label, or the nearest heading before it. */
  heading?: string | null;
  /**
   * The list of every group this one is a group of: lists of the same items under their own
   * headings (an accordion's panels, a list of lists) are also read as one list, whose selector
   * this is.
   */
  groupOf?: string;
};
/**
 * A labelled value of a detail page: a `<dl>` entry, a row of a table of row headers
 * (`<th>Price</th><td>…`), a value after a label ("Price:"), or an element with a test id or `itemprop`.
 */
export type PageDetail = { name: string; selector: string; sample: string };
/**
 * How a listing goes on past what the page shows now, with the selector a `paging` step needs:
 * - `links`: a pager (numbered links, "Next", "Older stories", `a[rel=next]`); `selector` matches
 *   its links, `pages` are the numbered ones, `current` the number shown as the current page
 *   (plain text or `aria-current`), `next` the link onwards;
 * - `more`: a "Load more"/"Show more"/"More" button; `selector` is the button;
 * - `scroll`: no pager or button, but a listing on a page taller than the window: it may load more
 *   when scrolled to the bottom. A guess: only a `scroll` call shows whether it grows. No selector.
 */
export type PagePagination = {
  kind: 'links' | 'more' | 'scroll';
  selector?: string;
  current: string | null;
  pages: PageLink[];
  next: PageLink | null;
};
/**
 * A control that changes what the page shows without leaving it: a `tab`, an `accordion` (a
 * summary or a button with `aria-expanded`; `selected` when open) or a `select` (a dropdown whose
 * change event fills a list), with its options.
 */
export type PageControl = {
  kind: 'tab' | 'accordion' | 'select';
  selector: string;
  text: string;
  selected?: boolean;
  options?: { value: string; text: string }[];
};
export type PageModel = {
  url: string;
  title: string;
  headings: (ElementRef & { level: number })[];
  forms: PageForm[];
  buttons: ElementRef[];
  links: PageLink[];
  navigation: { selector: string; label: string; links: PageLink[] }[];
  pagination: PagePagination | null;
  tables: PageTable[];
  lists: PageList[];
  details: PageDetail[];
  /** Tabs, accordions and dropdowns (older page models have none). */
  controls?: PageControl[];
};

/** Every selector a page model names: what a proposal may use. */
export function pageModelSelectors(model: PageModel): Set<string> {
  const selectors = new Set<string>();
  const add = (selector: string | undefined) => selector && selectors.add(selector);
  for (const heading of model.headings) add(heading.selector);
  for (const form of model.forms) {
    add(form.selector);
    for (const input of form.inputs) add(input.selector);
    for (const submit of form.submit) add(submit.selector);
  }
  for (const element of [...model.buttons, ...model.links, ...model.navigation.flatMap((nav) => nav.links)]) add(element.selector);
  for (const nav of model.navigation) add(nav.selector);
  if (model.pagination) {
    add(model.pagination.selector);
    for (const link of model.pagination.pages) add(link.selector);
    add(model.pagination.next?.selector);
  }
  for (const table of model.tables) {
    add(table.selector);
    add(table.linkSelector);
  }
  for (const list of model.lists) {
    add(list.selector);
    add(list.itemSelector);
    add(list.linkSelector);
  }
  for (const detail of model.details) add(detail.selector);
  for (const control of model.controls ?? []) add(control.selector);
  return selectors;
}
