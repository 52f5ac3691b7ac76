import { raw } from '@mikro-orm/postgresql';

/**
 * A `text[]` parameter for raw SQL, as in `status = any(?)`. MikroORM inlines parameters itself
 * and spreads a plain array into a comma list (`'a', 'b'`), which only fits `in (?)` and breaks on
 * an empty array; this wraps that list as `array[…]::text[]`, escaped the same way, empty allowed.
 */
export function textArray(values: readonly string[]) {
  return raw('array[?]::text[]', [values]);
}
