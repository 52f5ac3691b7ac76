/**
 * Secrets are removed when a log entry is written, not when it is read: parameter values marked
 * secret, proxy passwords, cookie values, keys and tokens never reach the table.
 *
 * Every non-empty secret is removed, however short: a three-digit code is as secret as a long
 * password. The price of a very short secret is a log with its characters blanked out wherever
 * they occur, which is better than a log that shows it.
 */
import { redactFoundSecrets, TOKEN_SHAPES } from './secretRecogniser.ts';

const MARK = '[redacted]';

const tokenLike = [
  ...TOKEN_SHAPES, // API keys, JWTs and other tokens known by their shape
  /([?&](?:token|key|secret|password|code|access_token)=)[^&#\s"']+/gi,
  /(authorization:\s*(?:bearer|basic|apikey)\s+)\S+/gi,
];

/**
 * The ways a secret shows up in text: as given, escaped inside a JSON string, and percent-encoded
 * in a URL (a browser's error or its page URL quotes the URL it was given in encoded form): as
 * encodeURIComponent writes it, as a query holds it typed in, as a form sent by GET puts it in
 * the query (`+` for a space), and as the user info or the path of a URL holds it.
 */
function writtenForms(secret: string) {
  const forms = [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)];
  forms.push(new URLSearchParams({ x: secret }).toString().slice(2));
  const url = new URL('http://host/');
  url.password = secret;
  forms.push(url.password);
  // A query or a path typed in ends at `#` (and a path at `?`).
  if (!secret.includes('#')) forms.push(new URL(`http://host/?${secret}`).search.slice(1));
  if (!/[#?]/.test(secret)) forms.push(new URL(`http://host/${secret}`).pathname.slice(1));
  return forms.filter((form) => form.length > 0);
}

/** One pattern for all forms of all secrets, longest first, so one pass replaces each occurrence once. */
function secretPattern(secrets: readonly string[]) {
  const forms = [...new Set(secrets.filter((secret) => secret.length > 0).flatMap(writtenForms))].sort((a, b) => b.length - a.length);
  if (forms.length === 0) return null;
  return new RegExp(forms.map((form) => form.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')).join('|'), 'g');
}

export type Redactor = {
  /** The text with every secret, in any of its written forms, and every token-like string marked. */
  text(text: string): string;
  /** A JSON value with each value (not key) redacted; a number or boolean that holds a secret becomes the marked text. */
  object(value: unknown): unknown;
  /** Whether a text holds one of the secrets, in any form `text` would remove. */
  holdsSecret(text: string): boolean;
};

/**
 * Redaction of one set of secrets. Building it compiles their pattern, so build it once per
 * batch of log entries or per node, not per value.
 *
 * `recognise`: also remove the secrets nobody named, as ./secretRecogniser.ts finds them in
 * prose (`the password is hunter2`): for what a model reads and writes. A run's own log keeps
 * what its pages print, so that it can be debugged; it hides the run's secrets and tokens only.
 */
export function redactor(secrets: readonly string[], options: { recognise?: boolean } = {}): Redactor {
  const pattern = secretPattern(secrets);
  const text = (input: string) => {
    let out = pattern ? input.replace(pattern, MARK) : input;
    for (const token of tokenLike) {
      out = out.replace(token, (match, prefix?: string) =>
        typeof prefix === 'string' && match.startsWith(prefix) ? `${prefix}${MARK}` : MARK,
      );
    }
    return options.recognise ? redactFoundSecrets(out, MARK) : out;
  };
  return {
    text,
    object: (value) =>
      mapLeaves(value, (leaf) => {
        const input = String(leaf);
        const out = text(input);
        return out === input ? leaf : out;
      }),
    holdsSecret: (input) => pattern !== null && input.search(pattern) >= 0,
  };
}

export function redact(text: string, secrets: readonly string[] = []) {
  return redactor(secrets).text(text);
}

/** `redactor(secrets).object(value)`, for a single value. */
export function redactObject(value: unknown, secrets: readonly string[] = []): unknown {
  return redactor(secrets).object(value);
}

type Leaf = string | number | boolean;

/** A JSON value with each string, number and boolean replaced by `map(leaf)`; keys stay as they are. */
export function mapLeaves(value: unknown, map: (leaf: Leaf) => unknown): unknown {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return map(value);
  if (Array.isArray(value)) return value.map((item) => mapLeaves(item, map));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapLeaves(item, map)]));
  }
  return value;
}
