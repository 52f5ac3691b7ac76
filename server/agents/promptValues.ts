/**
 * The values a user writes into an analysis prompt. Quoted ones (`log in as "ada@example.com"`)
 * become parameters of the proposal, named by the word before them (`email`, `query` …).
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
  [/\bpass(word|phrase|code)?\b/i, 'password'],
  [/\b(e-?mail|email address)\b/i, 'email'],
  [/\b(user(name)?|login|account)\b/i, 'username'],
  [/\b(search(ing)?|query|look(ing)? for|find)\b/i, 'query'],
  [/\b(token|api.?key|secret|pin|otp)\b/i, 'secret'],
  [/\b(category|section|tab|menu)\b/i, 'category'],
  [/\b(name)\b/i, 'name'],
];

/** A value's place in the prompt: `start`–`end` is what a secret's placeholder replaces. */
type Occurrence = { start: number; end: number; value: string; secret?: SecretKind };

/** Splits a prompt into its values and the prompt with secret values replaced by `{{name}}`. */
export function readPromptValues(prompt: string): { prompt: string; values: PromptValue[] } {
  const found = findSecrets(prompt);
  const occurrences: Occurrence[] = [];
  for (const match of prompt.matchAll(/"([^"\n]{1,500})"|“([^”\n]{1,500})”/g)) {
    const value = (match[1] ?? match[2]) as string;
    const start = match.index + 1;
    const end = start + value.length;
    // A quoted value that holds a secret is sealed whole.
    const secret = found.find((candidate) => candidate.start < end && candidate.end > start)?.kind;
    occurrences.push({ start, end, value, secret });
  }
  for (const secret of found) {
    if (!occurrences.some((other) => secret.start < other.end && secret.end > other.start)) {
      occurrences.push({ start: secret.start, end: secret.end, value: secret.value, secret: secret.kind });
    }
  }
  occurrences.sort((a, b) => a.start - b.start);

  const values: PromptValue[] = [];
  const replaced: { start: number; end: number; name: string }[] = [];
  let last = 0;
  for (const occurrence of occurrences) {
    // The words since the previous value, at most 40 characters back (the quote excluded).
    const before = prompt.slice(Math.max(last, occurrence.start - 41), Math.max(last, occurrence.start - 1)).toLowerCase();
    last = occurrence.end;
    // A secret written twice is one parameter.
    const known = occurrence.secret && values.find((other) => other.secret && other.value === occurrence.value);
    if (known) {
      replaced.push({ start: occurrence.start, end: occurrence.end, name: known.name });
      continue;
    }
    let name: string = occurrence.secret ?? '';
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
    if (!name && /@/.test(occurrence.value) && /\.\w/.test(occurrence.value)) name = 'email';
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
