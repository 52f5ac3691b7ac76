import { createCipheriv, createDecipheriv, createHash, hash, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/** A URL-safe random token with `bytes` bytes of entropy. */
export function randomToken(bytes = 32) {
  return randomBytes(bytes).toString('base64url');
}

export function sha256(value: string) {
  return hash('sha256', value);
}

/** Whether `value` hashes to `digest` (a SHA-256 in hex), compared in constant time. */
export function sha256Matches(value: string, digest: string) {
  const given = hash('sha256', value, 'buffer');
  const stored = Buffer.from(digest, 'hex');
  return stored.length === given.length && timingSafeEqual(given, stored);
}

/** Constant-time equality of two strings (of any lengths). */
export function safeEqual(a: string, b: string) {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right) && a.length === b.length;
}

/**
 * Secrets the service must read back (a TOTP secret) are stored sealed: AES-256-GCM under a key
 * derived (HKDF-SHA256) from the service secret and a purpose, so each purpose has its own key.
 * Format `v1.<iv>.<tag>.<ciphertext>`, base64url parts.
 */
function sealingKey(serviceSecret: string, purpose: string) {
  return Buffer.from(hkdfSync('sha256', serviceSecret, 'browserflow-sealed', purpose, 32));
}

export function sealString(serviceSecret: string, purpose: string, value: string) {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(serviceSecret, purpose), iv);
  const data = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), data].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
}

/** The sealed value, or null when it was sealed under another key or tampered with. */
export function openString(serviceSecret: string, purpose: string, sealed: string) {
  const [version, iv, tag, data] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || data === undefined) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealingKey(serviceSecret, purpose), Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/**
 * Bytes sealed like strings (AES-256-GCM under the purpose's key): `iv (12) | tag (16) | ciphertext`.
 * For files at rest, such as a session's saved profile.
 */
export function sealBytes(serviceSecret: string, purpose: string, value: Uint8Array) {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(serviceSecret, purpose), iv);
  const data = Buffer.concat([cipher.update(value), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), data]);
}

/** The sealed bytes, or null when they were sealed under another key or tampered with. */
export function openBytes(serviceSecret: string, purpose: string, sealed: Uint8Array) {
  if (sealed.length < 28) return null;
  const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.length);
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealingKey(serviceSecret, purpose), bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]);
  } catch {
    return null;
  }
}
