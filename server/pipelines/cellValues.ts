/**
 * Turning the text of table cells and list fields into typed values. Pure.
 */

export type CellType = 'string' | 'number' | 'boolean' | 'html';

/**
 * Plain numbers with optional thousands separators: `12`, `-3.5`, `1,234.50`. A leading zero
 * (`007`, a zip code, an id) keeps a value a string, as does a currency or a unit.
 */
const PLAIN_NUMBER = /^[-+]?(0|[1-9]\d{0,2}(,\d{3})+|[1-9]\d*)(\.\d+)?$|^[-+]?0?\.\d+$/;

/** A cell's value: "" → null, "true"/"false" → booleans, plain numbers → numbers, else the text. */
export function inferValue(text: string): string | number | boolean | null {
  const trimmed = text.trim();
  if (trimmed === '') return null;
  if (/^(true|false)$/i.test(trimmed)) return trimmed.toLowerCase() === 'true';
  if (PLAIN_NUMBER.test(trimmed)) return Number(trimmed.replace(/,/g, ''));
  return trimmed;
}

/** `$1,234.50` → 1234.5, `-12 %` → -12; null when no number is there. */
export function toNumber(text: string): number | null {
  const cleaned = text.replace(/[^\d.\-eE]/g, '').replace(/(?!^)-/g, '');
  if (!/\d/.test(cleaned)) return null;
  const value = Number(cleaned);
  return Number.isFinite(value) ? value : null;
}

export function toBoolean(text: string): boolean | null {
  const trimmed = text.trim().toLowerCase();
  if (['true', 'yes', 'y', 'on', '1', '✓', '✔'].includes(trimmed)) return true;
  if (['false', 'no', 'n', 'off', '0', '✗', '✘'].includes(trimmed)) return false;
  return null;
}

export function convertText(text: string | null, type: CellType | undefined, infer: boolean): unknown {
  if (text === null) return null;
  switch (type) {
    case 'number':
      return toNumber(text);
    case 'boolean':
      return toBoolean(text);
    case 'string':
    case 'html':
      return text;
    default:
      return infer ? inferValue(text) : text;
  }
}

/** Record keys from header texts: blanks become `column<n>`, repeats get `_2`, `_3`. */
export function uniqueKeys(headers: string[], width: number): string[] {
  const keys: string[] = [];
  const used = new Set<string>();
  for (let index = 0; index < Math.max(headers.length, width); index++) {
    const base = headers[index]?.trim().replace(/\s+/g, ' ') || `column${index + 1}`;
    let key = base;
    for (let n = 2; used.has(key); n++) key = `${base}_${n}`;
    used.add(key);
    keys.push(key);
  }
  return keys;
}
