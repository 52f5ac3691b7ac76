/** Whether `element` takes room on the page and is not hidden by its style. */
export function visible(element: Element) {
  const box = (element as HTMLElement).getBoundingClientRect?.();
  const style = getComputedStyle(element);
  return Boolean(box && box.width > 0 && box.height > 0 && style.visibility !== 'hidden' && style.display !== 'none');
}
