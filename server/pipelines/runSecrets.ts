import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Values of secret parameters never enter workflow history, logs or API answers. The run row
 * keeps them encrypted (AES-256-GCM, key derived from the service secret); the workflow carries
 * a placeholder string in their place, and the activity that runs a node swaps it back.
 */
const PLACEHOLDER_PREFIX = '\u0000secret:';

export function secretPlaceholder(name: string) {
  return `${PLACEHOLDER_PREFIX}${name}`;
}

function keyFrom(serviceSecret: string) {
  return createHash('sha256').update(`run-secrets:${serviceSecret}`).digest();
}

export function encryptSecrets(serviceSecret: string, values: Record<string, unknown>) {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFrom(serviceSecret), iv);
  const data = Buffer.concat([cipher.update(JSON.stringify(values), 'utf8'), cipher.final()]);
  return `${iv.toString('base64')}.${cipher.getAuthTag().toString('base64')}.${data.toString('base64')}`;
}

export function decryptSecrets(serviceSecret: string, sealed: string | null | undefined): Record<string, unknown> {
  if (!sealed) return {};
  const [iv, tag, data] = sealed.split('.');
  const decipher = createDecipheriv('aes-256-gcm', keyFrom(serviceSecret), Buffer.from(iv ?? '', 'base64'));
  decipher.setAuthTag(Buffer.from(tag ?? '', 'base64'));
  return JSON.parse(Buffer.concat([decipher.update(Buffer.from(data ?? '', 'base64')), decipher.final()]).toString('utf8'));
}

/** Replaces placeholders (anywhere in a JSON value) with the secret values. */
export function revealSecrets<T>(value: T, secrets: Record<string, unknown>): T {
  if (typeof value === 'string' && value.startsWith(PLACEHOLDER_PREFIX)) {
    const name = value.slice(PLACEHOLDER_PREFIX.length);
    return (name in secrets ? secrets[name] : value) as T;
  }
  if (Array.isArray(value)) return value.map((item) => revealSecrets(item, secrets)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, revealSecrets(item, secrets)])) as T;
  }
  return value;
}

/** The strings to redact from logs and errors: every secret value (stringified when not a string). */
export function secretStrings(secrets: Record<string, unknown>) {
  return Object.values(secrets)
    .map((value) => (typeof value === 'string' ? value : JSON.stringify(value)))
    .filter((value): value is string => typeof value === 'string' && value.length > 0);
}
