import type { PageDetail } from '../pageModel.ts';
import { selectorOf } from './selector.ts';
import { clean, fieldKey, isLabel } from './text.ts';
import { visible } from './visible.ts';

/** The most labelled values a page model names. */
export const MAX_DETAILS = 20;

/**
 * A detail page's labelled values (at most 20): `<dl>` entries, rows of a table of row headers,
 * values after a label, then elements a test id or itemprop names. Values inside a repeated list's
 * items (`listItems`) are its records' fields, not the page's.
 */
export function readDetails(listItems: Set<Element>): PageDetail[] {
  const details: PageDetail[] = [];
  const addDetail = (label: string, value: Element) => {
    const name = fieldKey(label);
    if (name && details.length < MAX_DETAILS && !details.some((detail) => detail.name === name))
      details.push({ name, selector: selectorOf(value), sample: clean(value.textContent) });
  };
  const inRecords = (element: Element) => listItems.has(element) || [...listItems].some((item) => item.contains(element));
  for (const term of document.querySelectorAll('dl dt')) {
    const value = term.nextElementSibling;
    if (value?.tagName !== 'DD' || !visible(value) || inRecords(term)) continue;
    addDetail(clean(term.textContent), value);
  }
  // A table of row headers, one value each: `<tr><th>Price</th><td>3</td></tr>`.
  for (const row of document.querySelectorAll('tr')) {
    const cells = [...(row as HTMLTableRowElement).cells];
    if (cells.length === 2 && cells[0]?.tagName === 'TH' && cells[1]?.tagName === 'TD' && visible(row))
      addDetail(clean(cells[0].textContent), cells[1]);
  }
  // A value after its label: `<b>Price:</b> <span>3</span>`, `Price: <span>3</span>`.
  for (const element of document.querySelectorAll('body *')) {
    if (details.length >= MAX_DETAILS) break;
    if (element.children.length || !clean(element.textContent) || element.closest('form, table, nav, dl, script, style')) continue;
    if (inRecords(element) || !visible(element)) continue;
    let node: Node | null = element.previousSibling;
    while (node && node.nodeType === 3 && !clean(node.textContent)) node = node.previousSibling;
    const label = clean(node?.textContent);
    if (node && isLabel(label)) addDetail(label.slice(0, -1), element);
  }
  for (const element of document.querySelectorAll('[itemprop], [data-testid]')) {
    if (details.length >= MAX_DETAILS) break;
    if (element.closest('form, table, nav') || inRecords(element) || !visible(element)) continue;
    if (element.children.length > 2 || !clean(element.textContent)) continue;
    const name = fieldKey(element.getAttribute('itemprop') ?? element.getAttribute('data-testid') ?? '');
    if (name && !details.some((detail) => detail.name === name))
      details.push({ name, selector: selectorOf(element), sample: clean(element.textContent) });
  }
  return details;
}
