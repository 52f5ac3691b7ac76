/**
 * Whether `element` takes room on the page and is not hidden by its style, nor inside a closed
 * `<details>` or other content the browser skips (`checkVisibility`: a closed accordion's table
 * still has a box, and its text reads as empty).
 */
export function visible(element: Element) {
  const box = (element as HTMLElement).getBoundingClientRect?.();
  const style = getComputedStyle(element);
  if (typeof element.checkVisibility === 'function' && !element.checkVisibility()) return false;
  return Boolean(box && box.width > 0 && box.height > 0 && style.visibility !== 'hidden' && style.display !== 'none');
}
