import type { PageModel } from '../pageModel.ts';
import { selectorOf } from './selector.ts';
import { clean } from './text.ts';
import { visible } from './visible.ts';

/** The page's visible `h1`–`h3`, in document order (at most 30). */
export function readHeadings(): PageModel['headings'] {
  return [...document.querySelectorAll('h1, h2, h3')]
    .filter(visible)
    .slice(0, 30)
    .map((element) => ({ level: Number(element.tagName[1]), text: clean(element.textContent), selector: selectorOf(element) }));
}

/** What names an element on the page: its aria-label, or the nearest heading before it (up to four ancestors up). */
export function headingBefore(element: Element): string | null {
  const label = element.getAttribute('aria-label') ?? '';
  if (label) return clean(label);
  let node: Element | null = element;
  for (let depth = 0; node && node !== document.body && depth < 4; depth++, node = node.parentElement) {
    // A panel labelled by its control (`aria-labelledby`), or the summary of its `<details>`.
    const labelledBy = node.getAttribute('aria-labelledby');
    const label = labelledBy && document.getElementById(labelledBy.split(/\s+/)[0] ?? '');
    if (label && clean(label.textContent)) return clean(label.textContent);
    for (let sibling = node.previousElementSibling; sibling; sibling = sibling.previousElementSibling) {
      if (/^H[1-6]$|^SUMMARY$/.test(sibling.tagName)) return clean(sibling.textContent);
      const inner = sibling.querySelectorAll('h1, h2, h3, h4, h5, h6');
      if (inner.length) return clean(inner[inner.length - 1]?.textContent);
    }
  }
  return null;
}
