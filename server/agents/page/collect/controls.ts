import type { PageControl } from '../pageModel.ts';
import { labelOf, nameOf } from './accessibleName.ts';
import { selectorOf } from './selector.ts';
import { clean } from './text.ts';
import { visible } from './visible.ts';

/** The most controls of each kind a page model names, and options of a select. */
export const MAX_CONTROLS = 20;
export const MAX_OPTIONS = 40;

/**
 * The controls that change what a page shows without leaving it: tabs (`role=tab`, a button of a
 * `role=tablist`), accordions (a closed `<details>`'s summary, a button with `aria-expanded`) and
 * dropdowns (a `<select>` outside a form with a submit control, whose change event fills a list),
 * each with its text, and a select with its options. Values typed are never read: a select's
 * options are the page's own text.
 */
export function readControls(): PageControl[] {
  const controls: PageControl[] = [];
  const seen = new Set<Element>();
  const add = (element: Element, control: Omit<PageControl, 'selector'>) => {
    if (seen.has(element) || controls.filter((other) => other.kind === control.kind).length >= MAX_CONTROLS) return;
    seen.add(element);
    controls.push({ selector: selectorOf(element), ...control });
  };
  for (const tab of document.querySelectorAll('[role=tab], [role=tablist] button, [role=tablist] a')) {
    if (!visible(tab)) continue;
    add(tab, { kind: 'tab', text: nameOf(tab), selected: tab.getAttribute('aria-selected') === 'true' });
  }
  for (const summary of document.querySelectorAll('details > summary')) {
    const details = summary.parentElement as HTMLDetailsElement;
    if (!visible(summary)) continue;
    add(summary, { kind: 'accordion', text: clean(summary.textContent), selected: details.open });
  }
  for (const button of document.querySelectorAll('button[aria-expanded], [role=button][aria-expanded]')) {
    if (!visible(button) || button.closest('nav, [role=tablist]') || button.getAttribute('aria-haspopup')) continue;
    add(button, { kind: 'accordion', text: nameOf(button), selected: button.getAttribute('aria-expanded') === 'true' });
  }
  for (const select of document.querySelectorAll('select')) {
    const form = select.closest('form');
    if (!visible(select) || form?.querySelector('button, input[type=submit]')) continue;
    const options = [...(select as HTMLSelectElement).options]
      .filter((option) => !option.disabled)
      .slice(0, MAX_OPTIONS)
      .map((option) => ({ value: option.value, text: clean(option.textContent) }));
    add(select, { kind: 'select', text: labelOf(select), options });
  }
  return controls;
}
