/** The longest text a page model holds (a name, a label, a sample); longer ones are cut. */
export const MAX_TEXT = 80;

/** `text` on one line: runs of blanks made one space, trimmed, cut at MAX_TEXT. */
export function clean(text: string | null | undefined) {
  return (text ?? '').replace(/\s+/g, ' ').trim().slice(0, MAX_TEXT);
}

/** A label that names the value after it: a short text ending in a colon ("Price:", "Sold by:"). */
export function isLabel(text: string) {
  return /^[\p{L}][\p{L}\p{N} _/-]{0,30}:$/u.test(text);
}

/** A record key for a label or a name: lower case, runs of other characters as `_`, never starting with a digit. */
export function fieldKey(text: string) {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .replace(/^([0-9])/, '_$1')
    .slice(0, 40);
}
