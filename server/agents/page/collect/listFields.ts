import type { ListField } from '../pageModel.ts';
import { quote } from './selectorText.ts';
import { clean, isLabel } from './text.ts';

/**
 * A repeated list's fields: the parts of its first item that every item has, by a selector inside
 * the item (at most 8), each link with its address as a field of its own. `items` are the list's
 * items, the first one first.
 */
export function readFields(items: Element[]): ListField[] {
  const first = items[0] as Element;
  const fields: ListField[] = [];
  const used = new Set<string>();
  const hasHeading = Boolean(first.querySelector('h1, h2, h3, h4, h5, h6'));
  for (const element of first.querySelectorAll('*')) {
    if (fields.length >= 8) break;
    const text = clean(element.textContent);
    const ownText = [...element.childNodes].some((node) => node.nodeType === 3 && clean(node.textContent));
    if (!ownText && element.tagName !== 'A') continue;
    // A label ("Price:", a <dt>) names the value after it; it is no field of its own, nor is
    // an element whose own text is only such a label (`<span>Score: <b>42</b></span>`).
    const own = clean([...element.childNodes].map((node) => (node.nodeType === 3 ? node.textContent : ' ')).join(' '));
    if (element.tagName === 'DT' || isLabel(text) || isLabel(own) || constantLabel(element, items)) continue;
    const selector = fieldSelector(element, first, items);
    if (!selector || used.has(selector)) continue;
    if (!items.every((item) => item.querySelector(selector))) continue;
    used.add(selector);
    const taken = fields.map((field) => field.name);
    const name = freeName(snakeName(fieldHint(element, text, items, hasHeading, fields.length)), taken);
    fields.push({ name, selector, sample: text });
    if (element.tagName === 'A') {
      const url = freeName(name === 'title' ? 'url' : `${name}_url`, [...taken, name]);
      fields.push({ name: url, selector, attribute: 'href', sample: (element as HTMLAnchorElement).href });
    }
  }
  return fields;
}

/** `name`, or with the first free `_2`, `_3`… in place of its number when `taken` holds it. */
export function freeName(name: string, taken: string[]) {
  let free = name;
  for (let n = 2; taken.includes(free); n++) free = `${free.replace(/_\d+$/, '')}_${n}`;
  return free;
}

/**
 * The property a nested microdata item has in `first` (`location` for the `name` of
 * `<div itemprop="location" itemscope>`), when `element` belongs to one.
 */
export function nestedProperty(element: Element, first: Element) {
  const scope = element.parentElement?.closest('[itemscope]');
  return scope && scope !== first && first.contains(scope) ? scope.getAttribute('itemprop') : null;
}

/**
 * A selector for `element` inside its item `first`: a test id, an itemprop (through the property of
 * the nested item it belongs to), a tag the item has once, then its place in the item, tag by tag,
 * when every item of `items` has that place; a class the item has once only when none of these
 * does. Classes come last: a redesign renames them, and the structure stays.
 */
export function fieldSelector(element: Element, first: Element, items: Element[] = [first]) {
  const testId = element.getAttribute('data-testid');
  if (testId) return `[data-testid=${quote(testId)}]`;
  const itemprop = element.getAttribute('itemprop');
  if (itemprop) {
    const outer = nestedProperty(element, first);
    return outer ? `[itemprop=${quote(outer)}] [itemprop=${quote(itemprop)}]` : `[itemprop=${quote(itemprop)}]`;
  }
  const elementTag = element.tagName.toLowerCase();
  if (first.querySelectorAll(elementTag).length === 1) return elementTag;
  // Its place in the item, tag by tag (`:scope > p:nth-of-type(2) > span`).
  const path: string[] = [];
  for (let node: Element | null = element; node && node !== first; node = node.parentElement) {
    const current = node;
    const same = [...(current.parentElement?.children ?? [])].filter((other) => other.tagName === current.tagName);
    path.unshift(
      same.length > 1 ? `${current.tagName.toLowerCase()}:nth-of-type(${same.indexOf(current) + 1})` : current.tagName.toLowerCase(),
    );
  }
  const place = `:scope > ${path.join(' > ')}`;
  // The place must pick, in every item, what it picks in the first: an element of the same class,
  // when it has one (the selector does not lean on it, the page's markup of today checks it).
  const className = [...element.classList][0];
  const alike = (found: Element | null) => Boolean(found && (!className || found.classList.contains(className)));
  if (items.every((item) => alike(item.querySelector(place)))) return place;
  if (className && first.querySelectorAll(`.${CSS.escape(className)}`).length === 1) return `.${CSS.escape(className)}`;
  return place;
}

/** What labels `element` in its item: its `<dt>`, a "Price:" just before it, a label every item repeats, or a "Price: 3" it starts with. */
export function labelBefore(element: Element, items: Element[]) {
  if (element.tagName === 'DD') {
    const term = element.previousElementSibling;
    return term?.tagName === 'DT' ? clean(term.textContent) : '';
  }
  // "Price:" as the text just before it: a text node or an element of its own.
  let node: Node | null = element.previousSibling;
  while (node && node.nodeType === 3 && !clean(node.textContent)) node = node.previousSibling;
  const before = clean(node?.textContent);
  if (node && isLabel(before)) return before.slice(0, -1);
  const previous = element.previousElementSibling;
  if (previous && constantLabel(previous, items)) return clean(previous.textContent);
  // The label as the start of its own text: `Price: $3`.
  const own = [...element.childNodes].find((child) => child.nodeType === 3 && clean(child.textContent));
  return /^([\p{L}][\p{L}\p{N} _/-]{0,30}):\s*\S/u.exec(clean(own?.textContent))?.[1] ?? '';
}

/**
 * A label without a colon: a short text every item repeats word for word, just before a value
 * that differs from item to item (`<span>Author</span> <span>Frank Herbert</span>`).
 */
export function constantLabel(element: Element, items: Element[]) {
  const first = items[0] as Element;
  const text = clean(element.textContent);
  const next = element.nextElementSibling;
  if (items.length < 2 || element.children.length || !next || !/^[\p{L}][\p{L}\p{N} _/-]{0,30}$/u.test(text)) return false;
  const valuesAt = (selector: string) => items.map((item) => clean(item.querySelector(selector)?.textContent));
  const labels = valuesAt(fieldSelector(element, first, items));
  const values = valuesAt(fieldSelector(next, first, items));
  return labels.every((label) => label === text) && values.every(Boolean) && new Set(values).size > 1;
}

/** A name for what a text is, when nothing labels it: a date, a price, an author, a count of a unit, a number. */
export function shapeOf(tagName: string, text: string) {
  if (tagName === 'TIME' || /^\d{4}-\d{2}-\d{2}|\b(ago|yesterday|today)$/i.test(text)) return 'date';
  if (/^(?:[$€£¥]|[A-Z]{3}\s)\s?\d|^\d[\d,.]*\s?(?:[$€£¥]|EUR|USD|GBP|kr)$/.test(text)) return 'price';
  if (/^by\s+\S/i.test(text)) return 'author';
  const unit = /^\d[\d,.]*\s+(\p{L}{2,20})$/u.exec(text)?.[1];
  if (unit) return unit.toLowerCase();
  if (/^[-+]?\d[\d,.]*%?$/.test(text)) return 'number';
  return null;
}

/**
 * What names a field, by what a reader sees, never by its classes (`a`, `t`, `css-1x2y` say
 * nothing): its test id, itemprop or aria-label, its label, its heading, its shape.
 */
export function fieldHint(element: Element, text: string, items: Element[], hasHeading: boolean, fieldsBefore: number) {
  return (
    element.getAttribute('data-testid') ||
    nestedProperty(element, items[0] as Element) ||
    element.getAttribute('itemprop') ||
    element.getAttribute('aria-label') ||
    labelBefore(element, items) ||
    (/^H[1-6]$/.test(element.tagName) ? 'title' : '') ||
    // Bold text that opens an item without a heading is its title.
    (!hasHeading && /^(?:B|STRONG)$/.test(element.tagName) && !fieldsBefore ? 'title' : '') ||
    (element.tagName === 'A' ? (hasHeading ? 'link' : 'title') : '') ||
    shapeOf(element.tagName, text) ||
    'text'
  );
}

/** A field name from a hint: camelCase and other characters as `_`, lower case, never starting with a digit, `text` when nothing is left. */
export function snakeName(hint: string) {
  return (
    hint
      .replace(/([a-z])([A-Z])/g, '$1_$2')
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .replace(/^([0-9])/, '_$1')
      .slice(0, 40) || 'text'
  );
}
