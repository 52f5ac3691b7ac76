/**
 * What the workflow holds in place of a secret (server/pipelines/runSecrets.ts): a secret
 * argument's placeholder, or a node output sealed because it holds a secret. Both are strings
 * with a prefix no text a node returns starts with.
 *
 * Pure: the interpreter imports it inside the workflow, so no Node built-ins here.
 */
export const PLACEHOLDER_PREFIX = '\u0000secret:';
export const SEALED_PREFIX = '\u0000sealed:';

/** Whether `value` stands for a secret the workflow cannot read (a placeholder or a sealed value). */
export function isSealed(value: unknown): value is string {
  return typeof value === 'string' && (value.startsWith(SEALED_PREFIX) || value.startsWith(PLACEHOLDER_PREFIX));
}

/** Whether `value`, or any value inside its lists and records, is sealed. */
export function holdsSealed(value: unknown): boolean {
  if (isSealed(value)) return true;
  if (Array.isArray(value)) return value.some(holdsSealed);
  if (value !== null && typeof value === 'object') return Object.values(value).some(holdsSealed);
  return false;
}
