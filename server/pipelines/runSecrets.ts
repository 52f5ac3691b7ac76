import { openString, sealString } from '../auth/secrets.ts';
import { mapLeaves, redactor } from '../logs/redact.ts';
import { PLACEHOLDER_PREFIX, SEALED_PREFIX } from './engine/sealedValues.ts';

/**
 * Values of secret parameters never enter workflow history, logs or API answers. The run row
 * keeps them sealed (server/auth/secrets.ts: AES-256-GCM, a key derived from the service
 * secret); the workflow carries a placeholder string in their place, and the activity that runs
 * a node swaps it back.
 *
 * A node's outputs that hold a secret (a template that put the password into a text, a URL with
 * a token in it) go back to the workflow sealed the same way, one string at a time, so the next
 * node gets the real value while history keeps only ciphertext. Lists and records stay lists
 * and records, so loops work on them. Numbers and booleans are never sealed: a condition or a
 * loop limit on them must see the value itself (a secret should be a string; one equal to a
 * number output is still redacted where outputs and logs are stored). The workflow cannot
 * compare ciphertext, so the interpreter refuses a condition on a sealed value
 * (server/pipelines/engine/sealedValues.ts).
 */

export function secretPlaceholder(name: string) {
  return `${PLACEHOLDER_PREFIX}${name}`;
}

const PURPOSE = 'run-secrets';

function encrypt(serviceSecret: string, value: unknown) {
  return sealString(serviceSecret, PURPOSE, JSON.stringify(value));
}

function decrypt(serviceSecret: string, sealed: string): unknown {
  const text = openString(serviceSecret, PURPOSE, sealed);
  if (text === null) throw new Error('the run’s secrets cannot be opened: the service secret changed since the run started');
  return JSON.parse(text);
}

/** What the run row stores of the secret arguments. */
export function encryptSecrets(serviceSecret: string, values: Record<string, unknown>) {
  return encrypt(serviceSecret, values);
}

/**
 * A run's checked arguments as it keeps them, split by the plan's secret parameters: `shownArgs`
 * for the run row (a secret as `[secret]`), `workflowArgs` for the workflow's input (a secret as
 * its placeholder) and `sealedSecrets`, the secret values sealed for the run row (null without one).
 */
export function sealRunArgs(serviceSecret: string, secretParameters: readonly string[], values: Record<string, unknown>) {
  const secretNames = new Set(secretParameters);
  const secrets = Object.fromEntries(Object.entries(values).filter(([name]) => secretNames.has(name)));
  const swapSecrets = (stand: (name: string) => unknown) =>
    Object.fromEntries(Object.entries(values).map(([name, value]) => [name, secretNames.has(name) ? stand(name) : value]));
  return {
    shownArgs: swapSecrets(() => '[secret]'),
    workflowArgs: swapSecrets(secretPlaceholder),
    sealedSecrets: Object.keys(secrets).length ? encryptSecrets(serviceSecret, secrets) : null,
  };
}

/** Sealed values opened as they were given (an analysis prompt's secret values). */
export function openSecretValues(serviceSecret: string, sealedSecrets: string | null | undefined): Record<string, string> {
  return sealedSecrets ? (decrypt(serviceSecret, sealedSecrets) as Record<string, string>) : {};
}

/** The strings to redact from logs and errors: every secret value (stringified when not a string). */
function secretStrings(secrets: Record<string, unknown>) {
  return Object.values(secrets)
    .map((value) => (typeof value === 'string' ? value : JSON.stringify(value)))
    .filter((value): value is string => typeof value === 'string' && value.length > 0);
}

/**
 * A run's secrets, opened where a node runs (or the run ends), with `alsoHide` (the session's
 * stored cookie values, see `storedCookieValues`) hidden as well: `redactor` removes them from
 * what is stored or logged (built once here, for everything the node writes), `reveal` turns
 * placeholders and sealed values back into what they stand for, `seal` seals every string that
 * holds a secret before it goes back to the workflow.
 */
export function openRunSecrets(serviceSecret: string, sealedSecrets: string | null | undefined, alsoHide: readonly string[] = []) {
  const values = sealedSecrets ? (decrypt(serviceSecret, sealedSecrets) as Record<string, unknown>) : {};
  const hide = [...secretStrings(values), ...alsoHide.filter((value) => value.length > 0)];
  const redact = redactor(hide);
  return {
    redactor: redact,
    /** Every string `redactor` hides (for the browser's own log while the run drives it). */
    hidden: hide,
    reveal<T>(value: T): T {
      return mapLeaves(value, (leaf) => {
        if (typeof leaf !== 'string') return leaf;
        if (leaf.startsWith(SEALED_PREFIX)) return decrypt(serviceSecret, leaf.slice(SEALED_PREFIX.length));
        if (leaf.startsWith(PLACEHOLDER_PREFIX)) {
          const name = leaf.slice(PLACEHOLDER_PREFIX.length);
          return name in values ? values[name] : leaf;
        }
        return leaf;
      }) as T;
    },
    seal<T>(value: T): T {
      if (hide.length === 0) return value;
      return mapLeaves(value, (leaf) =>
        typeof leaf === 'string' && redact.holdsSecret(leaf) ? `${SEALED_PREFIX}${encrypt(serviceSecret, leaf)}` : leaf,
      ) as T;
    },
  };
}

/**
 * The session's stored cookie values a run's redactor hides too: its logs and error need only
 * pipelines.read, cookie values need cookies.read. As the browser host's log does, values under
 * four characters are left alone (a cookie `1` would blank every digit 1).
 */
export function storedCookieValues(cookies: readonly { value: string }[] | null | undefined) {
  return (cookies ?? []).map((cookie) => cookie.value).filter((value) => typeof value === 'string' && value.length >= 4);
}
