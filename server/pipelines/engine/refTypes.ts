/**
 * The value types of the pipeline language: node inputs and outputs, pipeline parameters and
 * outputs, and (later) function parameters and outputs all speak this one vocabulary.
 *
 * Pure: imported by workflows.
 */

export const refTypes = ['string', 'number', 'boolean', 'json', 'list', 'record', 'html', 'image', 'page'] as const;

export type RefType = (typeof refTypes)[number];

export const refTypeDescriptions: Record<RefType, string> = {
  string: 'Text.',
  number: 'A JSON number.',
  boolean: '`true` or `false`.',
  json: 'Any JSON value. The dynamic type: it is accepted where any other type (except `page`) is expected, and checked when the node runs.',
  list: 'A JSON array, e.g. the records of `extract.table`.',
  record: 'A JSON object.',
  html: 'HTML markup as a string; usable wherever a `string` is.',
  image: 'A PNG image as a base64 string (no `data:` prefix); usable wherever a `string` is.',
  page: 'An opaque handle to a browser tab (`{pageId}`), made by `browser.page` and passed from browser node to browser node. It orders their side effects. It cannot be a literal or a parameter.',
};

/** Types a pipeline (or function) parameter may have: every type but `page`. */
export const parameterRefTypes = refTypes.filter((type) => type !== 'page') as Exclude<RefType, 'page'>[];

/**
 * Whether a value of type `from` may flow into an input of type `to`. `json` is the dynamic
 * type (both ways); `html` and `image` are strings; `page` only ever meets `page`.
 */
export function isAssignable(from: RefType, to: RefType): boolean {
  if (from === to) return true;
  if (from === 'page' || to === 'page') return false;
  if (from === 'json' || to === 'json') return true;
  if (to === 'string') return from === 'html' || from === 'image';
  if (to === 'html') return from === 'string';
  return false;
}

/** The JSON type a literal has, as close to a refType as a literal can say. */
export function literalRefType(value: unknown): Exclude<RefType, 'page' | 'html' | 'image'> {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'boolean';
  if (Array.isArray(value)) return 'list';
  if (value !== null && typeof value === 'object') return 'record';
  return 'json';
}

/**
 * Whether a runtime value fits a refType (used on parameter arguments; `null` fits nothing but
 * `json`). `page` values are `{pageId: string}`.
 */
export function valueFits(value: unknown, type: RefType): boolean {
  switch (type) {
    case 'json':
      return value !== undefined;
    case 'string':
    case 'html':
    case 'image':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'list':
      return Array.isArray(value);
    case 'record':
      return value !== null && typeof value === 'object' && !Array.isArray(value);
    case 'page':
      return value !== null && typeof value === 'object' && typeof (value as { pageId?: unknown }).pageId === 'string';
  }
}
