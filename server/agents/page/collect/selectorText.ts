/** Selector text, built from what the page shows: quoted so that any value stays one value. */

/** A CSS selector for an id: `#id` when it is a plain identifier, else an attribute match. */
export function cssId(value: string) {
  return /^[A-Za-z][A-Za-z0-9_-]*$/.test(value) ? `#${value}` : `[id="${value.replace(/"/g, '\\"')}"]`;
}

/** `value` as a quoted string for an attribute selector or a role's name. */
export function quote(value: string) {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** Whether `selector` is one of Playwright's own engines (`role=`, `text=`, `internal:`) rather than CSS. */
export function usesEngine(selector: string) {
  return /^(role|text|internal:)/.test(selector);
}

/** `child` inside `parent`: CSS descends with a space, Playwright's own engines chain with `>>`. */
export function within(parent: string, child: string) {
  return usesEngine(parent) ? `${parent} >> ${child}` : `${parent} ${child}`;
}

/** Whether an id looks written by hand rather than generated (`:r1:`, `item-48213`, `3f2a…`): only those name an element for good. */
export function stableId(id: string) {
  return !/\d{4,}|^[0-9]|:/.test(id);
}
