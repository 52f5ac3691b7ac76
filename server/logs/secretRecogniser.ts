/**
 * The one recogniser of secrets written into free text: an analysis prompt, what a page shows, what
 * a model answers. It finds values by how people and formats write them, without knowing them
 * (./redact.ts removes the values a run or job knows). It is used wherever a prompt is built: the
 * prompt's values are sealed by it (server/agents/promptValues.ts), and every message of an agent
 * job passes it before it is stored, logged or sent (server/agents/messages.ts).
 *
 * What it finds:
 * - a value after a word that names a secret (password, passwd, pwd, pw, passphrase, passcode, pin,
 *   secret, token, otp, bearer, credentials; api key, access token, client secret, private key,
 *   2fa code …; and identifiers ending in one: DB_PASSWORD, apiKey, x-api-key), written as
 *   `password: x`, `password=x`, `"password": "x"`, `password is x`, `pwd 'x'`, `password hunter2`,
 *   or some words further on (`the password for the admin account is hunter2`), the value in any
 *   quotes (" ' ` “” ‘’) or none;
 * - a value before such a word: `use hunter2 as the password`, `hunter2 is my password`;
 * - the password of a URL's user info (`https://user:pass@host`);
 * - well-known token shapes anywhere (`TOKEN_SHAPES`), and long hex or base64 runs shortly after a
 *   naming word.
 *
 * What it leaves: prose. A naming word alone ("Forgot password?") or followed by a word of prose
 * ("the password field", "your token expires", "the password is required") is no secret. A plain
 * word counts as a password only where the phrasing says it is one; after `token`, `secret`, `pin`
 * and the like a value must look like one (digits, symbols, mixed case, or length). The price:
 * a password that is an ordinary English word, written loosely ("the password is required"), is
 * taken for prose.
 *
 * Replacements keep JSON intact: no value it reports holds a quote or a backslash, so a message
 * stored as JSON text stays JSON when its values are replaced.
 */

/** `password`: a password-like name (or a URL's password); `secret`: any other. */
export type SecretKind = 'password' | 'secret';

/** A value found in a text: `text.slice(start, end) === value`. */
export type FoundSecret = { start: number; end: number; value: string; kind: SecretKind };

/** Tokens recognisable by their shape alone, wherever they are written. */
export const TOKEN_SHAPES: readonly RegExp[] = [
  /bfk_[A-Za-z0-9]{8}_[A-Za-z0-9_-]{20,}/g, // this service's API keys
  /eyJ[\w-]{10,}\.[\w-]{10,}\.[\w-]{10,}/g, // JWTs
  /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}/g, // OpenAI, Anthropic
  /\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}/g, // Stripe secret and restricted keys
  /\bwhsec_[A-Za-z0-9+/=]{16,}/g, // Stripe webhook signing secrets
  /\bgh[pousr]_[A-Za-z0-9]{30,}/g, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{30,}/g,
  /\bglpat-[A-Za-z0-9_-]{20,}/g, // GitLab
  /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g, // AWS access key ids
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, // Slack
  /\bAIza[0-9A-Za-z_-]{35}\b/g, // Google API keys
  /\bnpm_[A-Za-z0-9]{36}\b/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
];

/** The shapes as one pattern: one pass over a text instead of one per shape. */
const ANY_TOKEN_SHAPE = new RegExp(TOKEN_SHAPES.map((shape) => `(?:${shape.source})`).join('|'), 'g');

const PASSWORD_WORDS = new Set(['password', 'passwd', 'pwd', 'pw', 'passphrase', 'passcode']);
const NAME_WORDS = new Set([...PASSWORD_WORDS, 'pin', 'secret', 'token', 'apikey', 'otp', 'credentials', 'bearer']);
/** Two words that name a secret together (`api key`, `client_secret`, `x-api-key`, `2fa code`). */
const NAME_PAIRS: Record<string, string[]> = {
  api: ['key', 'token', 'secret'],
  access: ['key', 'token'],
  secret: ['key'],
  private: ['key'],
  client: ['secret'],
  auth: ['token', 'code'],
  refresh: ['token'],
  session: ['token'],
  pin: ['code'],
  time: ['password', 'code'], // one-time password
  '2fa': ['code'],
  mfa: ['code'],
  otp: ['code'],
  verification: ['code'],
  security: ['code'],
  recovery: ['code'],
  backup: ['code'],
};

/** Words that are prose, not a value, where a value could stand. */
const PROSE = new Set(
  `a an the this that these those it its it's is are was were be been being am not no yes and or but nor if then else so to of for in
  on at by with from as into onto over under about via per your you yours my mine our ours their theirs his her hers we they i me us
  them he she who what which where when why how here there below above field fields box input inputs form page link button label
  manager managers reset change changes update forgot forgotten lost recovery recover hint hints strength policy policies rules
  requirements length required optional incorrect invalid wrong correct valid missing empty blank needed necessary expired expires
  expire expiry hidden shown show hide set sent stored saved protected must should will would can could may might shall has have
  had do does did too very also only again still now please same different new old current previous confirm confirmation entry
  enter type provided given use using following one none any all some each every other another sensitive case-sensitive secure
  safe strong weak later first instead known unknown login log sign sign-in account user username email e-mail characters at least
  written taken chosen kept stolen broken used leaked boolean string strings number object array`.split(/\s+/),
);
/** A value that stands for no secret: JSON literals, placeholders, markers of values already removed. */
const NOT_A_VALUE = /^(?:true|false|null|undefined|none|\{\{[^}]*\}\}|\[(?:redacted|value hidden|secret)\]|[*•●]{2,})$/i;
/** Prose-shaped words: `hashed`, `expiring`, `case-sensitive`, `changeable`. */
const PROSE_SUFFIX = /^[a-z]+(?:-[a-z]+)*(?:ed|ing|ly|ive|able|ible|ful|less|ous|ness|ment|tion|sion)$/;

const QUOTES: Record<string, string> = { '"': '"', "'": "'", '`': '`', '“': '”', '‘': '’' };

/**
 * A value in quotes (JSON-escaped quotes too, at any depth), or a run of characters up to a space,
 * a quote, or an `&` that starts a query parameter (`Tr0ub4dor&3` is one value, `a&b=c` two).
 */
const VALUE = /\\*(["'`“‘])([^\n"'`”’\\]{1,200})\\*(["'`”’])|([^\s"'`“‘\\<>&([{](?:[^\s"`\\<>&]|&(?![\w.-]+=)){0,199})/y;

/** How a value may follow its naming word, strongest first. */
const STRUCTURAL = /[ \t]*(?::=|=>|->|[:=]|[-–](?=[ \t]))(?:[ \t]*|\s*(?=\\*["'`“‘]))/y;
const PROSE_SEPARATOR = /\s+(?:is|was|are|were|will\s+be|should\s+be|equals|of|to)(?:[ \t]*:)?[ \t]+/iy;
/** Up to ten words, no clause between them, then `is`, `was`, `:` or `=`. */
const FAR =
  /(?:[ \t]+(?!(?:and|or|but|must|should|can|could|will|would|may|might|if|when|then|because|so|is|was|are|were|has|have|had|does|do|did|not|never)\b)[\w@'’/-]+(?:\.[\w@'’/-]+)*){1,10}?(?:[ \t]*[:=][ \t]*|[ \t]+(?:is|was)(?:[ \t]*:)?[ \t]+)/iy;
const LOOSE = /[ \t]+/y;

/** What may follow a plain word for it to stand alone as a value: the clause ends. */
const CLAUSE_END = /^(?:\s*$|\s*[.,;!?)\]}]|\s+(?:and|then|or|but|please)\b)/i;

/**
 * A value before its naming word, found from the word backwards: `use hunter2 as the password`
 * (the connector `as`/`for`, then the value, then a verb such as `use`), `hunter2 is my password`.
 */
const AS_CONNECTOR = /\s(?:as|for)\s+(?:(?:the|my|your|our|their|its|an?|this)\s+)?(?:[\w-]+\s+){0,2}$/i;
const IS_CONNECTOR = /\s(?:is|was)\s+(?:the|my|your|our|their|its|an?)\s+(?:[\w-]+\s+){0,2}$/i;
const USE_VERB = /[\s(](?:use|using|with|enter|type|try|put)\s+$/i;
const OPENING: Record<string, string> = { '"': '"', "'": "'", '`': '`', '”': '“', '’': '‘' };

const URL_PASSWORD = /\b[a-z][a-z0-9+.-]{0,20}:\/\/[^\s/?#@:"'`<>\\]+:([^\s/?#@"'`<>\\]+)@/dgi;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `[A-Za-z0-9+/_=-]`, by character code: it is asked for every character after every naming word. */
const isRunChar = (code: number) =>
  (code >= 48 && code <= 57) ||
  (code >= 65 && code <= 90) ||
  (code >= 97 && code <= 122) ||
  code === 43 ||
  code === 47 ||
  code === 95 ||
  code === 61 ||
  code === 45;

/**
 * Longer than this, a run of base64 characters is data (a screenshot, a cookie jar), not words:
 * a name inside it (`…xPwd+…`) is chance, and nothing in it is taken for a value.
 */
const MAX_BLOB = 200;

/** Whether `start`–`end` lies inside a run of base64 characters longer than `MAX_BLOB`. */
function insideBlob(text: string, start: number, end: number) {
  let from = start;
  while (from > 0 && end - from <= MAX_BLOB && isRunChar(text.charCodeAt(from - 1))) from--;
  let to = end;
  while (to < text.length && to - from <= MAX_BLOB && isRunChar(text.charCodeAt(to))) to++;
  return to - from > MAX_BLOB;
}

/** A run of 24 or more hex or base64 characters that mixes letters and digits and is no uuid or path. */
function isLongRun(run: string) {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(run) || UUID.test(run) || run.includes('//')) return false;
  return run.replace(/\D/g, '').length >= 3 && run.replace(/[^A-Za-z]/g, '').length >= 3;
}

const IDENTIFIER = /[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)*/g;
/** A cheap first look: only identifiers holding one of these can name a secret. */
const NAMEISH = /pass|pw|pin|secret|token|key|otp|credential|bearer|code/i;

/** The words of an identifier: `DB_PASSWORD`, `apiKey`, `x-api-key`, `APIKey`. */
const wordsOf = (identifier: string) =>
  identifier
    .split(/[_-]|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/)
    .filter(Boolean)
    .map((word) => word.toLowerCase());

/** Whether a value looks like a secret of itself: digits with letters, symbols, inner capitals, a long code. */
export function looksSecret(value: string) {
  const letters = /[A-Za-z]/.test(value);
  const digits = /\d/.test(value);
  if (/^\d{4,}$/.test(value)) return true; // a PIN, a one-time code
  if (/^\d+(?:[.,]\d+)*$/.test(value)) return false; // an amount
  if (letters && digits) return true;
  if (/[^A-Za-z0-9]/.test(value) && (letters || digits) && !/^[A-Za-z]+(?:[-'’][A-Za-z]+)*$/.test(value)) return true;
  if (/[a-z]/.test(value) && /[A-Z]/.test(value.slice(1))) return true;
  return value.length >= 20;
}

type Value = { start: number; end: number; value: string; quoted: boolean };

/**
 * Whether a value can be a secret at all: it holds a letter or digit (not `…`), it is no literal or
 * placeholder, and quoted, it does not begin or end with a space (the closing and opening quotes
 * of two code spans around ` of ` are not one value).
 */
const isValue = (value: Value) =>
  /[\p{L}\p{N}]/u.test(value.value) && !NOT_A_VALUE.test(value.value) && !(value.quoted && /^\s|\s$/.test(value.value));

/** The value at `at` (quoted: its inside), or null. */
function valueAt(text: string, at: number): Value | null {
  VALUE.lastIndex = at;
  const match = VALUE.exec(text);
  if (!match) return null;
  if (match[1] !== undefined) {
    const open = match[1];
    if (QUOTES[open] !== match[3]) return null;
    const inner = match[2] as string;
    const start = at + match[0].indexOf(inner);
    return { start, end: start + inner.length, value: inner, quoted: true };
  }
  // As long as a value may be, and going on: data, not a value.
  if ((match[4] as string).length === 200) return null;
  const value = (match[4] as string).replace(/[.,;:!?)\]}'’]+$/, '');
  if (!value) return null;
  return { start: at, end: at + value.length, value, quoted: false };
}

/** Whether a value is a secret where it stands. `loose`: the phrasing alone does not say it is one. */
function accepted(text: string, value: Value, tier: 'structural' | 'loose', passwordLike: boolean) {
  if (!isValue(value)) return false;
  if (value.quoted) return true;
  const word = value.value.toLowerCase();
  if (PROSE.has(word) || NAME_WORDS.has(word)) return false;
  if (tier === 'structural') return true;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value.value)) return false;
  if (looksSecret(value.value)) return true;
  // A plain word: a password where the clause ends with it (`with password swordfish and …`).
  return passwordLike && /^[A-Za-z]+$/.test(word) && !PROSE_SUFFIX.test(word) && CLAUSE_END.test(text.slice(value.end));
}

/** The separators a value may follow its naming word by, in the order they are tried. */
const SEPARATORS: [RegExp, 'structural' | 'loose'][] = [
  [STRUCTURAL, 'structural'],
  [PROSE_SEPARATOR, 'loose'],
  [FAR, 'loose'],
  [LOOSE, 'loose'],
];

/** The value that follows a naming word ending at `end`, if any. */
function valueAfter(text: string, end: number, passwordLike: boolean): Value | null {
  for (const [separator, tier] of SEPARATORS) {
    separator.lastIndex = end;
    const match = separator.exec(text);
    if (!match) continue;
    const value = valueAt(text, end + match[0].length);
    if (value && accepted(text, value, tier, passwordLike)) return value;
  }
  return null;
}

/** The value written just before `end` (quoted: its inside), read backwards, and where its writing starts. */
function valueEndingAt(text: string, end: number): { value: Value; from: number } | null {
  const closing = text[end - 1] ?? '';
  const opening = OPENING[closing];
  if (opening) {
    let close = end - 1;
    while (text[close - 1] === '\\') close--;
    const open = text.lastIndexOf(opening, close - 1);
    if (open < 0 || close - open - 1 > 200) return null;
    const inner = text.slice(open + 1, close);
    if (!inner || /[\n"'`”’\\]/.test(inner)) return null;
    let from = open;
    while (text[from - 1] === '\\') from--;
    return { value: { start: open + 1, end: close, value: inner, quoted: true }, from };
  }
  let from = end;
  while (from > 0 && end - from < 200 && !/[\s"'`\\<>()]/.test(text[from - 1] as string)) from--;
  const value = text.slice(from, end).replace(/[.,;:!?'’]+$/, '');
  return value ? { value: { start: from, end: from + value.length, value, quoted: false }, from } : null;
}

/** The value written before a naming word starting at `start`, if any. */
function valueBefore(text: string, start: number, passwordLike: boolean): Value | null {
  const near = Math.max(0, start - 80);
  const before = text.slice(near, start);
  for (const connector of [AS_CONNECTOR, IS_CONNECTOR]) {
    const match = connector.exec(before);
    if (!match) continue;
    let end = near + match.index;
    while (end > 0 && /\s/.test(text[end - 1] as string)) end--;
    const written = valueEndingAt(text, end);
    if (!written || !isValue(written.value)) continue;
    const { value, from } = written;
    if (connector === AS_CONNECTOR) {
      // `use … as`: the verb says it is a value; a plain word will do for a password.
      const lead = (from <= 20 ? ' ' : '') + text.slice(Math.max(0, from - 20), from);
      if (!USE_VERB.test(lead)) continue;
      if (!value.quoted && (PROSE.has(value.value.toLowerCase()) || (!passwordLike && !looksSecret(value.value)))) continue;
    } else if (!value.quoted && (PROSE.has(value.value.toLowerCase()) || !looksSecret(value.value))) {
      continue;
    }
    return value;
  }
  return null;
}

/** Every secret in `text`, in order, none overlapping another. */
export function findSecrets(text: string): FoundSecret[] {
  const found: FoundSecret[] = [];
  const add = (start: number, end: number, kind: SecretKind) => {
    if (end > start) found.push({ start, end, value: text.slice(start, end), kind });
  };

  for (const match of text.matchAll(ANY_TOKEN_SHAPE)) add(match.index, match.index + match[0].length, 'secret');
  for (const match of text.matchAll(URL_PASSWORD)) {
    const span = match.indices?.[1];
    if (span && !NOT_A_VALUE.test(match[1] as string)) add(span[0], span[1], 'password');
  }

  let previous: RegExpExecArray | null = null;
  IDENTIFIER.lastIndex = 0;
  for (let identifier = IDENTIFIER.exec(text); identifier; previous = identifier, identifier = IDENTIFIER.exec(text)) {
    if (!NAMEISH.test(identifier[0])) continue;
    const words = wordsOf(identifier[0]);
    const last = words[words.length - 1] as string;
    let start = identifier.index;
    const end = start + identifier[0].length;
    let named = NAME_WORDS.has(last) || (words.length > 1 && (NAME_PAIRS[words[words.length - 2] as string] ?? []).includes(last));
    // A pair written as two words: `api key`, `2fa code`.
    if (!named && words.length === 1 && previous && /^[ \t]$/.test(text.slice(previous.index + previous[0].length, start))) {
      const first = wordsOf(previous[0]).pop() as string;
      if ((NAME_PAIRS[first] ?? []).includes(last)) {
        named = true;
        start = previous.index;
      }
    }
    if (!named || insideBlob(text, start, end)) continue;
    // A name inside a value already found (`pwd 'Hunter2-pw' orders`) names nothing after it.
    if (found.some((secret) => start < secret.end && end > secret.start)) continue;
    const passwordLike = PASSWORD_WORDS.has(last);
    const kind: SecretKind = passwordLike ? 'password' : 'secret';
    // A quoted name (a JSON key, `'password': …`) closes its quote before the separator.
    let after = end;
    const close = QUOTES[text[start - 1] ?? ''];
    if (close) {
      let at = end;
      while (text[at] === '\\') at++;
      if (text[at] === close) after = at + 1;
    }
    const value = valueAfter(text, after, passwordLike || last === 'bearer') ?? valueBefore(text, start, passwordLike);
    if (value) add(value.start, value.end, kind);
    // A long hex or base64 run shortly after the name, whatever stands between.
    for (let at = end, runStart = end; at - runStart <= MAX_BLOB; at++) {
      if (at < text.length && isRunChar(text.charCodeAt(at))) continue;
      if (at - runStart >= 24 && isLongRun(text.slice(runStart, at))) add(runStart, at, kind);
      if (at >= text.length || text[at] === '\n' || at >= end + 80) break;
      runStart = at + 1;
    }
  }

  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: FoundSecret[] = [];
  for (const secret of found) {
    const previous = kept[kept.length - 1];
    if (previous && secret.start < previous.end) {
      // Overlapping finds (a token shape inside a value): one span covering both.
      if (secret.end > previous.end) {
        previous.end = secret.end;
        previous.value = text.slice(previous.start, previous.end);
      }
      continue;
    }
    kept.push({ ...secret });
  }
  return kept;
}

/**
 * `text` with every secret the recogniser finds replaced by `mark`. An unquoted JSON value
 * (`"pin": 1234`) becomes a quoted mark, so JSON text stays JSON (escaped JSON inside JSON too).
 */
export function redactFoundSecrets(text: string, mark = '[redacted]') {
  const found = findSecrets(text);
  if (found.length === 0) return text;
  let out = '';
  let last = 0;
  for (const secret of found) {
    const before = text.slice(Math.max(last, secret.start - 40), secret.start);
    const jsonKey = /(\\*)"\s*:\s*$/.exec(before);
    const quote = jsonKey ? `${jsonKey[1]}"` : '';
    out += `${text.slice(last, secret.start)}${quote}${mark}${quote}`;
    last = secret.end;
  }
  return out + text.slice(last);
}
