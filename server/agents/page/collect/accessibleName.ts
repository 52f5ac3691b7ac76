import { quote } from './selectorText.ts';
import { clean } from './text.ts';

/** What labels a field: its aria-label, the elements it is labelled by, its `<label>`, then its placeholder or title. */
export function labelOf(element: Element): string {
  const aria = element.getAttribute('aria-label');
  if (aria) return clean(aria);
  const labelledBy = element.getAttribute('aria-labelledby');
  if (labelledBy)
    return clean(
      labelledBy
        .split(/\s+/)
        .map((id) => document.getElementById(id)?.textContent ?? '')
        .join(' '),
    );
  const id = element.getAttribute('id');
  if (id) {
    const label = document.querySelector(`label[for=${quote(id)}]`);
    if (label) return clean(label.textContent);
  }
  const wrapping = element.closest('label');
  if (wrapping) return clean(wrapping.textContent);
  return clean(element.getAttribute('placeholder') ?? element.getAttribute('title') ?? '');
}

/** The ARIA role Playwright's role engine finds `element` by: its `role`, else its tag's (for the tags the model names). */
export function roleOf(element: Element) {
  const explicit = element.getAttribute('role');
  if (explicit) return explicit;
  const tag = element.tagName.toLowerCase();
  if (tag === 'nav') return 'navigation';
  if (tag === 'a') return 'link';
  if (tag === 'button') return 'button';
  if (tag === 'input') {
    const type = (element.getAttribute('type') ?? 'text').toLowerCase();
    if (['submit', 'button', 'reset'].includes(type)) return 'button';
    if (type === 'checkbox') return 'checkbox';
    if (type === 'search') return 'searchbox';
    return 'textbox';
  }
  if (tag === 'textarea') return 'textbox';
  if (tag === 'select') return 'combobox';
  if (tag === 'table') return 'table';
  return null;
}

/** The accessible name of `element`, as the role engine matches it. */
export function nameOf(element: Element) {
  const tag = element.tagName.toLowerCase();
  if (tag === 'input' || tag === 'textarea' || tag === 'select') {
    const type = (element.getAttribute('type') ?? '').toLowerCase();
    if (['submit', 'button'].includes(type)) return clean((element as HTMLInputElement).value || labelOf(element));
    return labelOf(element);
  }
  // A table is named by its label or caption, never by its content (the role engine does the same).
  if (tag === 'table') return clean(element.getAttribute('aria-label') ?? (element as HTMLTableElement).caption?.textContent ?? '');
  return clean(element.getAttribute('aria-label') ?? element.textContent);
}
