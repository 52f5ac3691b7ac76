/**
 * Secrets are removed when a log entry is written, not when it is read: parameter values marked
 * secret, proxy passwords, cookie values, keys and tokens never reach the table.
 */
const tokenLike = [
  /bfk_[A-Za-z0-9]{8}_[A-Za-z0-9_-]{20,}/g, // our API keys
  /eyJ[\w-]{10,}\.[\w-]{10,}\.[\w-]{10,}/g, // JWTs
  /([?&](?:token|key|secret|password|code|access_token)=)[^&#\s"']+/gi,
  /(authorization:\s*(?:bearer|basic|apikey)\s+)\S+/gi,
];

export function redact(text: string, secrets: readonly string[] = []) {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
  }
  for (const pattern of tokenLike) {
    out = out.replace(pattern, (match, prefix?: string) =>
      typeof prefix === 'string' && match.startsWith(prefix) ? `${prefix}[redacted]` : '[redacted]',
    );
  }
  return out;
}

export function redactObject(value: unknown, secrets: readonly string[] = []): unknown {
  if (value === null || value === undefined) return value;
  return JSON.parse(redact(JSON.stringify(value), secrets));
}
