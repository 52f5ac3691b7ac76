/**
 * The values a user writes into an analysis prompt, in quotes: `log in as "ada@example.com" with
 * password "hunter2" and list the orders`. Each becomes a parameter of the proposal, named by the
 * word before it (`email`, `password`, `query` …). Values named like a secret (password, token,
 * key, pin, secret) are taken out of the prompt before anything is stored or shown to a model: the
 * prompt keeps `{{password}}`, the value is sealed with the job, and only the browser tools put it
 * back, on the browser host. The other values become the parameters' defaults.
 */
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

/** Splits a prompt into its quoted values and the prompt with secret values replaced. */
export function readPromptValues(prompt: string): { prompt: string; values: PromptValue[] } {
  const values: PromptValue[] = [];
  const pattern = /"([^"\n]{1,500})"|“([^”\n]{1,500})”/g;
  let shown = '';
  let last = 0;
  for (const match of prompt.matchAll(pattern)) {
    const value = (match[1] ?? match[2]) as string;
    // The words since the previous value, at most 40 characters back.
    const before = prompt.slice(Math.max(last, (match.index ?? 0) - 40), match.index).toLowerCase();
    // The nearest naming word before the value.
    let name = '';
    let nearest = -1;
    for (const [word, candidate] of NAME_WORDS) {
      for (const found of before.matchAll(new RegExp(word.source, 'gi'))) {
        if ((found.index ?? -1) > nearest) {
          nearest = found.index ?? -1;
          name = candidate;
        }
      }
    }
    if (!name && /@/.test(value) && /\.\w/.test(value)) name = 'email';
    name ||= `value${values.length + 1}`;
    let unique = name;
    for (let n = 2; values.some((other) => other.name === unique); n++) unique = `${name}${n}`;
    if (!NAME_PATTERN.test(unique)) unique = `value${values.length + 1}`;
    const secret = SECRET_NAME.test(unique);
    values.push({ name: unique, value, secret });
    shown += prompt.slice(last, match.index) + (secret ? `"{{${unique}}}"` : match[0]);
    last = (match.index ?? 0) + match[0].length;
  }
  shown += prompt.slice(last);
  return { prompt: shown, values };
}

/** `{{name}}` placeholders in a value a model wrote, filled from the job's values (on the browser host only). */
export function fillPlaceholders(text: string, values: Record<string, string>): string {
  return text.replace(/\{\{([A-Za-z_][A-Za-z0-9_-]{0,63})\}\}/g, (whole, name: string) => values[name] ?? whole);
}
