import type { PageList } from '../pageModel.ts';
import { headingBefore } from './headings.ts';
import { readFields } from './listFields.ts';
import { selectorOf } from './selector.ts';
import { usesEngine, within } from './selectorText.ts';
import { clean } from './text.ts';
import { visible } from './visible.ts';

/**
 * Repeated lists or cards: a container with 3+ children of the same tag holding text (at most 8
 * lists). `seen` answers every item of a list found, whether or not it had fields: the page's own
 * details are looked for outside them.
 */
export function readLists(pager: Element | null, control: Element | null): { lists: PageList[]; seen: Set<Element> } {
  const lists: PageList[] = [];
  const seen = new Set<Element>();
  for (const container of document.querySelectorAll('ul, ol, dl, main, section, div, [role=list]')) {
    const items = listItems(container, pager, control);
    if (!items || items.some((item) => seen.has(item))) continue;
    for (const item of items) seen.add(item);
    const containerSelector = selectorOf(container);
    const itemSelector = itemSelectorOf(containerSelector, items);
    const fields = readFields(items);
    const link = fields.find((field) => field.attribute === 'href');
    if (fields.length) {
      lists.push({
        selector: containerSelector,
        itemSelector,
        count: items.length,
        fields,
        heading: headingBefore(container),
        ...(link ? { linkSelector: within(itemSelector, link.selector) } : {}),
      });
    }
    if (lists.length >= 8) break;
  }
  return { lists: [...lists, ...groupedLists(lists)], seen };
}

/**
 * Lists of the same items in groups, each under a heading of its own (an accordion's panels, one
 * list per heading): their items, fields and field selectors alike. Each such set is read as one
 * list as well, the groups' selectors joined (CSS), named by the heading before what holds them
 * all; each group keeps its own list, marked `groupOf` it.
 */
export function groupedLists(lists: PageList[]): PageList[] {
  const shape = (list: PageList) =>
    `${list.itemSelector.split(' > ').pop()}|${list.fields.map((field) => `${field.name}=${field.selector}@${field.attribute ?? ''}`).join(';')}`;
  const groups = new Map<string, PageList[]>();
  for (const list of lists) {
    if (usesEngine(list.selector) || usesEngine(list.itemSelector) || list.selector.includes(',')) continue;
    groups.set(shape(list), [...(groups.get(shape(list)) ?? []), list]);
  }
  const grouped: PageList[] = [];
  for (const parts of groups.values()) {
    // Groups each under a heading of its own ("Languages", "Crafts"): lists alike without one are
    // told apart by the request, not read as one.
    const headings = parts.map((part) => part.heading);
    if (parts.length < 2 || headings.some((heading) => !heading) || new Set(headings).size < parts.length) continue;
    const containers = parts.map((part) => document.querySelector(part.selector));
    // One group in each item of another list (the labelled values of each card) is part of that
    // list's records, not a list of its own.
    const mirrored = lists.some((other) => {
      if (parts.includes(other)) return false;
      const items = [...document.querySelectorAll(other.itemSelector)];
      return (
        items.length === parts.length &&
        items.every((item) => containers.filter((container) => container && item.contains(container)).length === 1)
      );
    });
    if (mirrored) continue;
    let common: Element | null = containers[0]?.parentElement ?? null;
    while (common && !containers.every((container) => container && common?.contains(container))) common = common.parentElement;
    const selector = parts.map((part) => part.selector).join(', ');
    const links = parts.map((part) => part.linkSelector).filter((link): link is string => Boolean(link));
    grouped.push({
      selector,
      itemSelector: parts.map((part) => part.itemSelector).join(', '),
      count: parts.reduce((sum, part) => sum + part.count, 0),
      fields: (parts[0] as PageList).fields,
      heading: common && common !== document.body ? headingBefore(common) : null,
      ...(links.length === parts.length ? { linkSelector: links.join(', ') } : {}),
    });
    for (const part of parts) part.groupOf = selector;
  }
  return grouped;
}

/**
 * The items of `container` when it is a repeated list: its visible children but the pager's
 * control, three of one tag (or two with some structure each: a paged list may show two per page),
 * no headings, paragraphs, spans, links or breaks, and most of them with parts and text. Null when
 * it is none, or sits in navigation, a form, a table or the pager.
 */
export function listItems(container: Element, pager: Element | null, control: Element | null) {
  if (!visible(container) || container.closest('nav, form, table') || container === pager || pager?.contains(container)) return null;
  // A pager or "more" control among the items (`<article>…<article><a rel=next>`) is none of them.
  const isControl = (child: Element) =>
    Boolean(control && (child === control || (child.contains(control) && clean(child.textContent) === clean(control.textContent))));
  const children = [...container.children].filter((child) => visible(child) && !isControl(child));
  if (children.length < 2 || (children.length === 2 && children.some((child) => child.children.length < 2))) return null;
  const tag = (children[0] as Element).tagName;
  if (!children.every((child) => child.tagName === tag)) return null;
  if (/^H[1-6]$|^P$|^SPAN$|^A$|^BR$/.test(tag)) return null;
  // Items with some structure: a heading, a link or several text parts.
  const structured = children.filter((child) => child.children.length >= 1 && clean(child.textContent).length > 0);
  if (structured.length < children.length * 0.8) return null;
  return children;
}

/**
 * The selector of a list's items: its container's, then the items' tag. `<article>`s or
 * `<section>`s that are all the page has are named by their tag alone: a container without a name
 * of its own (`main`, a wrapper) may change in a redesign, the articles stay.
 */
export function itemSelectorOf(containerSelector: string, items: Element[]) {
  const tag = (items[0] as Element).tagName;
  const itemTag = tag.toLowerCase();
  if (/^(?:ARTICLE|SECTION)$/.test(tag) && document.querySelectorAll(itemTag).length === items.length) return itemTag;
  return usesEngine(containerSelector) ? `${containerSelector} >> :scope > ${itemTag}` : `${containerSelector} > ${itemTag}`;
}
