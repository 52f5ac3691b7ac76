/**
 * The small lexicon where a request's words and a page's vocabulary meet: groups of words that
 * name the same thing ("name", "title", "label"; "price", "cost", "amount"), and the kind of value
 * some of them ask for (an e-mail address, a phone number, a date…). Nothing here is written for
 * one page: a request that says "name" matches cards whose names are their titles because the
 * two words are in one group, whatever the page.
 */

/** The kinds of value a request can name; every output is checked against the one it names (valueKinds.ts). */
export const valueKinds = ['email', 'phone', 'url', 'date', 'money', 'number', 'rating', 'name'] as const;
export type ValueKind = (typeof valueKinds)[number];

/** Words that mean one thing on a page; the first is the group's name. */
const SYNONYMS: readonly (readonly string[])[] = [
  ['name', 'title', 'label', 'heading'],
  ['price', 'cost', 'amount', 'fee', 'charge', 'fare'],
  ['email', 'e-mail', 'mail', 'mailbox'],
  ['phone', 'telephone', 'tel', 'mobile', 'cell'],
  ['url', 'link', 'website', 'homepage', 'href', 'site'],
  ['date', 'day', 'published', 'posted', 'when'],
  ['rating', 'score', 'stars', 'grade'],
  ['quantity', 'qty', 'count'],
  ['person', 'people', 'member', 'employee', 'staff'],
  ['description', 'summary', 'blurb'],
  ['address', 'location', 'place', 'venue', 'where'],
  ['length', 'duration', 'runtime'],
  ['distance', 'far'],
];

/** One form for singular and plural: `stories` → `story`, `boxes` → `box`, `prices` → `price`. */
export const stem = (word: string) =>
  word
    .toLowerCase()
    .replace(/ies$/, 'y')
    .replace(/(?:ss|x|zz|ch|sh)es$/, (ending) => ending.slice(0, -2))
    .replace(/([^s])s$/, '$1');

const GROUP_OF = new Map<string, number>();
for (const [index, group] of SYNONYMS.entries()) for (const word of group) GROUP_OF.set(stem(word), index);

/** `word` and the words of its group, each stemmed: what a page may call it. */
export function senses(word: string): string[] {
  const own = stem(word);
  const group = GROUP_OF.get(own);
  return group === undefined ? [own] : [own, ...(SYNONYMS[group] as readonly string[]).map(stem)];
}

/** Whether two words name the same thing: equal stems, or one group of the lexicon. */
export const sameSense = (a: string, b: string) => {
  const sa = stem(a);
  const sb = stem(b);
  return sa === sb || (GROUP_OF.has(sa) && GROUP_OF.get(sa) === GROUP_OF.get(sb));
};

/**
 * The words that ask for a kind of value, by kind; a compound ("phone number", "e-mail address",
 * "web address") is read before its parts, and the specific kinds before `number` and `name`.
 */
const KIND_WORDS: readonly [ValueKind, RegExp][] = [
  ['email', /^(?:e-?mails?|mails?|mailbox(?:es)?)$/],
  ['phone', /^(?:phones?|telephones?|tel|mobiles?|cell(?:phone)?s?|fax(?:es)?)$/],
  ['url', /^(?:urls?|links?|websites?|homepages?|hrefs?|web)$/],
  ['date', /^(?:dates?|days?|birthdays?|deadlines?|published|posted)$/],
  ['money', /^(?:prices?|costs?|amounts?|fees?|charges?|fares?|salar(?:y|ies)|totals?|payments?|budgets?|revenues?)$/],
  ['rating', /^(?:ratings?|scores?|stars?|grades?)$/],
  ['number', /^(?:numbers?|counts?|quantit(?:y|ies)|qty|rates?|percent(?:age)?s?|population|ages?)$/],
  ['name', /^(?:names?|titles?|labels?)$/],
];

/** Words that say which part of a kind is meant, and belong to it: "e-mail address", "phone number". */
const KIND_COMPANIONS: Partial<Record<ValueKind, RegExp>> = {
  email: /^(?:address(?:es)?)$/,
  phone: /^(?:numbers?|no)$/,
  url: /^(?:address(?:es)?|pages?)$/,
};

/**
 * The kind of value `words` (a request's noun phrase, in order) ask for, and which of the words
 * name it. The most specific kind named wins ("phone number" is a phone, not a number); none when
 * no word names a kind ("orders", "team members").
 */
export function kindOfWords(words: readonly string[]): { kind: ValueKind; words: string[] } | null {
  const lower = words.map((word) => word.toLowerCase());
  for (const [kind, pattern] of KIND_WORDS) {
    const at = lower.findIndex((word) => pattern.test(word));
    if (at < 0) continue;
    const companion = KIND_COMPANIONS[kind];
    const named = [words[at] as string];
    const next = lower[at + 1];
    if (companion && next && companion.test(next)) named.push(words[at + 1] as string);
    return { kind, words: named };
  }
  return null;
}

/** What a kind is called in a sentence a user reads. */
export const kindName: Record<ValueKind, string> = {
  email: 'e-mail address',
  phone: 'phone number',
  url: 'web address',
  date: 'date',
  money: 'amount of money',
  number: 'number',
  rating: 'rating',
  name: 'name',
};

/** The words a page may use for a column or label holding a value of `kind` ("Tel", "E-mail", "Price"). */
export function namesKind(label: string, kind: ValueKind): boolean {
  const found = kindOfWords(
    label
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .split(/[^A-Za-z0-9-]+/)
      .filter(Boolean),
  );
  return found?.kind === kind;
}
