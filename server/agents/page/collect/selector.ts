import { nameOf, roleOf } from './accessibleName.ts';
import { cssId, quote, stableId } from './selectorText.ts';
import { MAX_TEXT } from './text.ts';

/** Whether `selector` matches `element` and nothing else in the document (false for what is no valid CSS). */
export function unique(selector: string, element: Element) {
  try {
    const found = document.querySelectorAll(selector);
    return found.length === 1 && found[0] === element;
  } catch {
    return false;
  }
}

/** The test id attribute `element` carries (`data-testid`, `data-test-id` or `data-test`), if any. */
export function testIdAttribute(element: Element) {
  if (element.hasAttribute('data-testid')) return 'data-testid';
  if (element.hasAttribute('data-test-id')) return 'data-test-id';
  if (element.hasAttribute('data-test')) return 'data-test';
  return null;
}

/** The most stable selector that picks out `element` alone: a test id, an id, a name, a role with its name, then a path. */
export function selectorOf(element: Element): string {
  const attribute = testIdAttribute(element);
  const testId = attribute && element.getAttribute(attribute);
  if (attribute && testId) {
    const selector = `[${attribute}=${quote(testId)}]`;
    if (unique(selector, element)) return selector;
  }
  const id = element.getAttribute('id');
  if (id && stableId(id)) {
    const selector = cssId(id);
    if (unique(selector, element)) return selector;
  }
  const tag = element.tagName.toLowerCase();
  const name = element.getAttribute('name');
  if (name && ['input', 'select', 'textarea', 'button', 'form'].includes(tag)) {
    const selector = `${tag}[name=${quote(name)}]`;
    if (unique(selector, element)) return selector;
  }
  const role = roleOf(element);
  const accessible = nameOf(element);
  if (role && accessible) {
    const selector = `role=${role}[name=${quote(accessible)}]`;
    // The role engine matches substrings unless the name is exact; exact keeps it to this element.
    const exact = `role=${role}[name=${quote(accessible)}s]`;
    const sameName = [...document.querySelectorAll(tag)].filter((other) => roleOf(other) === role && nameOf(other) === accessible);
    if (sameName.length === 1) return accessible.length < MAX_TEXT ? exact : selector;
  }
  return pathSelector(element);
}

/**
 * A structural path of tags from the nearest ancestor with an id or test id, cut to its shortest
 * tail that still picks out the element alone: that survives wrappers a redesign adds around it.
 */
export function pathSelector(element: Element) {
  const parts: string[] = [];
  let node: Element | null = element;
  while (node && node !== document.body) {
    const parent: Element | null = node.parentElement;
    const anchorId = node.getAttribute('id');
    const anchorTest = node.getAttribute('data-testid');
    if (node !== element && anchorTest) {
      parts.unshift(`[data-testid=${quote(anchorTest)}]`);
      break;
    }
    if (node !== element && anchorId && stableId(anchorId)) {
      parts.unshift(cssId(anchorId));
      break;
    }
    parts.unshift(nthOfType(node));
    node = parent;
  }
  for (let start = parts.length - 1; start > 0; start--) {
    const tail = parts.slice(start).join(' > ');
    if (unique(tail, element)) return tail;
  }
  return parts.join(' > ');
}

/** `element`'s tag, with its place among its parent's children of that tag when it has such siblings (`li:nth-of-type(2)`). */
export function nthOfType(element: Element) {
  const tag = element.tagName.toLowerCase();
  const siblings = [...(element.parentElement?.children ?? [])].filter((child) => child.tagName === element.tagName);
  return siblings.length > 1 ? `${tag}:nth-of-type(${siblings.indexOf(element) + 1})` : tag;
}
