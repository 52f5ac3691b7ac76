/**
 * The values a user writes into an analysis prompt. Quoted ones, in double or single quotes
 * (`log in as "ada@example.com"`, `as 'ada'`), become parameters of the proposal, named by the word
 * before them (`email`, `query` …). Some are found unquoted too: an e-mail address anywhere, a
 * user name after `log in as`, `user`, `username`, `login` or `email`, and a search keyword after
 * `search for` (up to where the clause ends).
 * Secrets, however they are written (`password "hunter2"`, `pwd 'x'`, `password: x`, `the
 * password for the admin account is x`, `use x as the password`, a URL's `user:pass@`, an API
 * token), are found by the one recogniser (server/logs/secretRecogniser.ts) and taken out of the
 * prompt before anything is stored or shown to a model: the prompt keeps `{{password}}` (every
 * place the value appears), the value is sealed with the job, and only the browser tools put it
 * back, on the browser host. The other values become the parameters' defaults.
 */
import { findSecrets, type SecretKind } from '../logs/secretRecogniser.ts';
import { NAME_PATTERN } from '../pipelines/language.ts';

export type PromptValue = { name: string; value: string; secret: boolean };

const SECRET_NAME = /pass|secret|token|api.?key|pin\b|otp|credential/i;

/** Words a value's name is taken from, nearest first; the rest fall back to `value<n>`. */
const NAME_WORDS: [RegExp, string][] = [
  [/\bpass(word|phrase|code)?\b|\bpw\b|\bpwd\b|\bpasswd\b/i, 'password'],
  [/\b(e-?mail|email address)\b/i, 'email'],
  [/\b(user\s?(name)?|login|log\s?in|sign(ed)?\s?in|account)\b/i, 'username'],
  [/\b(search(ing)?|query|look(ing)? for|find)\b/i, 'query'],
  [/\b(token|api.?key|secret|pin|otp)\b/i, 'secret'],
  [/\b(category|section|tab|menu)\b/i, 'category'],
  [/\b(name)\b/i, 'name'],
];

/** A value's place in the prompt: `start`–`end` is what a secret's placeholder replaces. */
type Occurrence = { start: number; end: number; value: string; secret?: SecretKind; name?: string; placeholder?: boolean };

/** A value in double quotes, or in single quotes that no letter touches (an apostrophe is no quote). */
const QUOTED = /"([^"\n]{1,500})"|“([^”\n]{1,500})”|(?<![\p{L}\p{N}])'([^'\n]{1,200}?)'(?![\p{L}\p{N}])|‘([^’\n]{1,200})’/gu;
const EMAIL = /(?<![\w.+:/%-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;
/** An unquoted user name: the word after these (`log in as ada`, `user: ada`, `username ada`). */
const USER_LEAD = /\b(?:(?:log(?:ged)?\s?in|sign(?:ed)?\s?in|login)\s+as|user\s?(?:name)?|login|e-?mail)\s*[:=]?\s+(?=[\w@.+-])/gi;
/**
 * An unquoted search keyword: the words after `search for`, `search the parts for`, a bare `search`
 * (`search red on …`), `find` or `look for`/`look up`, until the clause ends.
 */
const SEARCH_LEAD = /\b(?:search(?:ing)?\s+(?:the\s+\w+\s+)?for|search(?:ing)?|find|look(?:ing)?\s+(?:for|up))\s+/gi;
const CLAUSE_STOP = /\s*(?:[,;.!?]|\s(?:and|then|on|in|at|from|with|to|pls|please)\b|$)/iy;
/** Words that stand where a value could but are none. */
const NOT_VALUES = new Set(
  `a an the my our your their his her its this that it and or then with without to of for in on at by as is me us all any
  some every each password pw pwd passwd token secret email e-mail user username login name account results result items
  everything nothing anything something what which field fields box input form page address column details data
  again first there here now`.split(/\s+/),
);

/**
 * Splits a prompt into its values and the prompt with secret values replaced by `{{name}}`.
 * `placeholders`: the prompt is a stored one, read again (as builtin reads it): an unquoted
 * `{{name}}` in it stands for the value sealed under that name. A user's own prompt is read without.
 */
export function readPromptValues(prompt: string, options: { placeholders?: boolean } = {}): { prompt: string; values: PromptValue[] } {
  const found = findSecrets(prompt);
  const occurrences: Occurrence[] = [];
  const taken = (start: number, end: number) => occurrences.some((other) => start < other.end && end > other.start);
  for (const match of prompt.matchAll(QUOTED)) {
    const value = (match[1] ?? match[2] ?? match[3] ?? match[4]) as string;
    if (!/[\p{L}\p{N}]/u.test(value)) continue;
    const start = match.index + 1;
    const end = start + value.length;
    // A quoted value that holds a secret is sealed whole.
    // A stored prompt's quoted placeholder (`pwd '{{password}}'`): the value sealed under its name.
    const sealed = options.placeholders ? /^\{\{([A-Za-z_][A-Za-z0-9_-]{0,63})\}\}$/.exec(value) : null;
    if (sealed) {
      occurrences.push({ start, end, value, name: sealed[1], placeholder: true });
      continue;
    }
    const secret = found.find((candidate) => candidate.start < end && candidate.end > start)?.kind;
    occurrences.push({ start, end, value, secret });
  }
  for (const secret of found) {
    if (!taken(secret.start, secret.end)) {
      occurrences.push({ start: secret.start, end: secret.end, value: secret.value, secret: secret.kind });
    }
  }
  // A placeholder left unquoted in a stored prompt (`password {{password}}`): the value sealed under its name.
  for (const match of options.placeholders ? prompt.matchAll(/\{\{([A-Za-z_][A-Za-z0-9_-]{0,63})\}\}/g) : []) {
    if (!taken(match.index, match.index + match[0].length))
      occurrences.push({ start: match.index, end: match.index + match[0].length, value: match[0], name: match[1], placeholder: true });
  }
  // Unquoted values: after the quoted ones and the secrets, so neither is read twice.
  const inUrl = (start: number) => /[a-z][\w+.-]*:\/\/\S*$/i.test(prompt.slice(Math.max(0, start - 300), start));
  for (const match of prompt.matchAll(EMAIL)) {
    const value = match[0].replace(/[.-]+$/, '');
    if (!taken(match.index, match.index + value.length) && !inUrl(match.index))
      occurrences.push({ start: match.index, end: match.index + value.length, value, name: 'email' });
  }
  for (const lead of prompt.matchAll(USER_LEAD)) {
    const start = lead.index + lead[0].length;
    const word = /[\w@.+-]+/y;
    word.lastIndex = start;
    const value = word.exec(prompt)?.[0].replace(/[.-]+$/, '') ?? '';
    if (!value || NOT_VALUES.has(value.toLowerCase()) || taken(start, start + value.length) || inUrl(start)) continue;
    occurrences.push({ start, end: start + value.length, value, name: /@/.test(value) ? 'email' : 'username' });
  }
  for (const lead of prompt.matchAll(SEARCH_LEAD)) {
    const start = lead.index + lead[0].length;
    if (inUrl(lead.index)) continue;
    let end = start;
    // Words up to where the clause ends: `search for red kettles and list them` → `red kettles`.
    while (end < prompt.length && end - start < 100) {
      CLAUSE_STOP.lastIndex = end;
      if (CLAUSE_STOP.test(prompt)) break;
      end++;
    }
    let value = prompt.slice(start, end).trim();
    if (!value || /["'“‘]/.test(prompt[start] ?? '') || NOT_VALUES.has(value.split(/\s+/)[0]?.toLowerCase() ?? '')) continue;
    // `find dune books`, `look for red kettles`: the keyword, and then what is asked for.
    if (!/^search/i.test(lead[0])) value = value.replace(/\s+[a-z]{3,}(?<!ss|us|is)s$/i, '');
    if (!taken(start, start + value.length)) occurrences.push({ start, end: start + value.length, value, name: 'query' });
  }
  occurrences.sort((a, b) => a.start - b.start);

  const values: PromptValue[] = [];
  const replaced: { start: number; end: number; name: string }[] = [];
  let last = 0;
  for (const occurrence of occurrences) {
    // The words since the previous value, at most 40 characters back (the quote excluded).
    const before = prompt.slice(Math.max(last, occurrence.start - 41), Math.max(last, occurrence.start - 1)).toLowerCase();
    last = occurrence.end;
    if (occurrence.placeholder) {
      const name = occurrence.name as string;
      if (!values.some((other) => other.name === name)) values.push({ name, value: occurrence.value, secret: SECRET_NAME.test(name) });
      continue;
    }
    // A secret written twice is one parameter.
    const known = occurrence.secret && values.find((other) => other.secret && other.value === occurrence.value);
    if (known) {
      replaced.push({ start: occurrence.start, end: occurrence.end, name: known.name });
      continue;
    }
    let name: string = occurrence.secret ?? occurrence.name ?? '';
    if (!name) {
      // The nearest naming word before the value.
      let nearest = -1;
      for (const [word, candidate] of NAME_WORDS) {
        for (const match of before.matchAll(new RegExp(word.source, 'gi'))) {
          if (match.index > nearest) {
            nearest = match.index;
            name = candidate;
          }
        }
      }
    }
    const email = /^[^\s@]+@[^\s@]+\.\w+$/.test(occurrence.value);
    if ((!name || name === 'username') && email) name = 'email';
    name ||= `value${values.length + 1}`;
    let unique = name;
    for (let n = 2; values.some((other) => other.name === unique); n++) unique = `${name}${n}`;
    if (!NAME_PATTERN.test(unique)) unique = `value${values.length + 1}`;
    const secret = Boolean(occurrence.secret) || SECRET_NAME.test(unique);
    values.push({ name: unique, value: occurrence.value, secret });
    if (secret) replaced.push({ start: occurrence.start, end: occurrence.end, name: unique });
  }

  // A secret written again elsewhere (`… hunter2 … and again hunter2`) is hidden there too.
  for (const value of values.filter((candidate) => candidate.secret && candidate.value.length >= 3)) {
    const escaped = value.value.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
    for (const match of prompt.matchAll(new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, 'gu'))) {
      const start = match.index;
      const end = start + match[0].length;
      if (!replaced.some((other) => start < other.end && end > other.start)) replaced.push({ start, end, name: value.name });
    }
  }
  replaced.sort((a, b) => a.start - b.start);
  let shown = '';
  let at = 0;
  for (const place of replaced) {
    shown += `${prompt.slice(at, place.start)}{{${place.name}}}`;
    at = place.end;
  }
  return { prompt: shown + prompt.slice(at), values };
}

/** `{{name}}` placeholders in a value a model wrote, filled from the job's values (on the browser host only). */
export function fillPlaceholders(text: string, values: Record<string, string>): string {
  return text.replace(/\{\{([A-Za-z_][A-Za-z0-9_-]{0,63})\}\}/g, (whole, name: string) => values[name] ?? whole);
}
