import { randomToken, sha256, sha256Matches } from './secrets.ts';

/**
 * API key format: `bfk_<8 chars>_<32 random bytes>`. The part before the second underscore is
 * the `keyPrefix`: stored in clear, shown on reads, used to find the row. The whole value is
 * the credential, checked against a SHA-256 in constant time.
 */
const keyPattern = /^(bfk_[A-Za-z0-9]{8})_([A-Za-z0-9_-]{43})$/;

export function generateApiKey() {
  const prefix = `bfk_${randomToken(12)
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, 8)
    .padEnd(8, '0')}`;
  const secret = `${prefix}_${randomToken(32)}`;
  return { keyPrefix: prefix, secret, secretHash: sha256(secret) };
}

export function parseApiKey(value: string) {
  const match = keyPattern.exec(value);
  return match ? { keyPrefix: match[1] as string, secret: value } : null;
}

export function apiKeyMatches(secret: string, secretHash: string) {
  return sha256Matches(secret, secretHash);
}
