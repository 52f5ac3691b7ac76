import { BadRequest } from '../errors.ts';

/**
 * The deepest a JSON body may nest. Checked on the text, in one pass, before anything parses or
 * walks it: no request reaches a recursion (the parser's, the REST adapter's stringify, a schema's)
 * that a deep body could overflow, and the check costs the same at any depth.
 */
export const MAX_JSON_DEPTH = 64;

/** How deep `text` nests its arrays and objects, counted up to `limit + 1` (strings skipped). */
export function jsonDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 92 /* \ */) i++;
      else if (char === 34 /* " */) inString = false;
      continue;
    }
    if (char === 34) inString = true;
    else if (char === 123 /* { */ || char === 91 /* [ */) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (char === 125 /* } */ || char === 93 /* ] */) depth--;
  }
  return deepest;
}

/** 400 `too_deep` for JSON text nested deeper than the limit. */
export function refuseDeepJson(text: string) {
  if (jsonDepth(text) > MAX_JSON_DEPTH) {
    return new BadRequest('too_deep', `The JSON nests deeper than ${MAX_JSON_DEPTH} levels`);
  }
  return undefined;
}
