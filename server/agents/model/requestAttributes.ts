/**
 * The values a request names for each record ("name, monthly cost, how much data", "with their date
 * and venue", "the title and length of every episode", "email address for each department"), and
 * which field of an extraction holds each of them. A request's attributes are part of what it asks
 * for: an extraction that holds none of the fields for one of them is not an answer, whatever the
 * page shows instead (verification.ts ends such a job loud, naming the words the user wrote); one
 * that holds them all is narrowed to them (`narrowToRequest`), so the records hold what was asked.
 */
import type { PageModel } from '../page/pageModel.ts';
import type { Proposal, ProposalStep } from '../proposal.ts';
import { kindOfWords, senses, type ValueKind } from './lexicon.ts';
import { requestedNoun } from './requestReading.ts';
import { fieldsOfKind, valueIsOfKind } from './valueKinds.ts';

/** One value the request names for each record, as the user wrote it, with what it means. */
export type RequestAttribute = {
  /** As written, trimmed of determiners: "monthly cost", "how many guests", "place". */
  written: string;
  /** The words a field may be named by ("when" → date, "where" → location). */
  words: string[];
  /** The kind of value it names, when it names one ("phone number" → phone, "when" → date). */
  kind: ValueKind | null;
};

/** Question words that stand for a value: "when", "where", "how far away", "how long". */
const QUESTIONS: readonly [RegExp, string[], ValueKind | null][] = [
  [/^when$/, ['date', 'when'], 'date'],
  [/^where$/, ['location', 'where'], null],
  [/^how far(?: away)?$/, ['distance'], 'number'],
  [/^how long$/, ['length', 'duration'], 'number'],
  [/^how much$/, ['price'], 'money'],
];
const DROP_LEADING = /^(?:the|its|their|his|her|a|an|each|every|all|one's|one’s|and|&|\+|also|plus)$/;
/** Words that end an item: a clause after it ("the day it runs", "how far away they are"). */
const ITEM_END = /^(?:it|they|he|she|we|you|u|i|is|are|was|were|in|on|at|from|for|to|by|pls|please|plz|thx|thanks)$/;
/** Items that name nothing a record holds. */
const NOT_ATTRIBUTES =
  /^(?:details?|info|information|everything|stuff|page|pages|own|own page|details page|table|list|results?|more|em|them|all)$/;
/** An item a list of attributes does not hold: a verb ("keep going"), or a thing counted ("all stories"). */
const NOT_IN_LIST =
  /^(?:all|every|each|keep|go|going|then|till|until|load|loads|scroll|show|open|click|search|login|log|sign|list|get|extract|grab|find|read)$/;
const VERBS = /^(?:list|get|give|tell|extract|collect|read|scrape|return|show|fetch|grab|pull|find|want|need|copy|gather|see|me|compare)$/;

/** The request's tokens: words and punctuation, its addresses, quoted values and e-mails left out. */
function tokensOf(request: string): string[] {
  return (
    request
      .replace(/\b[a-z][\w+.-]*:\/\/\S*?(?=[?,]?(?:\s|$))/gi, ' , ')
      .replace(/\{\{[^}]*\}\}|"[^"]*"|“[^”]*”|(?<![\p{L}\p{N}])'[^'\n]*'(?![\p{L}\p{N}])/gu, ' , ')
      .replace(/\S+@\S+/g, ' , ')
      .replace(/\s-\s/g, ' : ')
      .toLowerCase()
      .match(/[a-z][a-z0-9’'-]*|[,.;:!?()&+]/g) ?? []
  );
}

const isPunctuation = (token: string) => /^[,.;:!?()]$/.test(token);

/** One item of a list, as the user wrote it, or null when it names no value of a record. */
function attributeOf(item: string[]): RequestAttribute | null {
  const words = [...item];
  while (words.length && DROP_LEADING.test(words[0] as string)) words.shift();
  const end = words.findIndex((word, index) => index > 0 && ITEM_END.test(word));
  if (end > 0) words.length = end;
  if (!words.length || words.length > 5) return null;
  const written = words.join(' ');
  if (NOT_ATTRIBUTES.test(written)) return null;
  for (const [pattern, meaning, kind] of QUESTIONS) if (pattern.test(written)) return { written, words: meaning, kind };
  // "how many guests", "how much data": the words after the question are the value.
  const asked = /^how (?:many|much) (.+)$/.exec(written);
  if (asked) {
    const rest = (asked[1] as string).split(' ');
    return { written, words: rest, kind: written.startsWith('how many') ? 'number' : (kindOfWords(rest)?.kind ?? null) };
  }
  if (/^how\b/.test(written)) return null;
  const kind = kindOfWords(words);
  // "e-mail address", "phone number": the field is named by the kind's word, not by "address" or "number".
  const own = kind && kind.words.length > 1 ? words.filter((word) => word !== kind.words[1]) : words;
  // "price per night": named by what comes before "per".
  const per = own.indexOf('per');
  return { written, words: per > 0 ? own.slice(0, per) : own, kind: kind?.kind ?? null };
}

/** A run of items split by commas and "and", from `from` to where the list ends; null when one item is not an attribute. */
function listAt(tokens: string[], from: number, stop: (token: string) => boolean): string[][] | null {
  const items: string[][] = [[]];
  for (let at = from; at < tokens.length; at++) {
    const token = tokens[at] as string;
    if (stop(token)) break;
    if (token === ',' || token === 'and' || token === '&' || token === '+') {
      if ((items.at(-1) as string[]).length) items.push([]);
      continue;
    }
    (items.at(-1) as string[]).push(token);
  }
  const kept = items.filter((item) => item.length);
  if (kept.some((item) => NOT_IN_LIST.test(item[0] as string) || item.some((word) => VERBS.test(word)))) return null;
  return kept;
}

/**
 * The values `request` names for each record, in its order; none when it names none. Read from a
 * list after a colon, a dash, a question or in parentheses ("- name, monthly cost, how much data"),
 * after "with" following the things listed ("every course with the day it runs and its fee"),
 * after a possessive ("list their names, phone numbers…", "each one's name, town…"), and before
 * "of"/"for" each thing ("the title and length of every episode", "email address for each department").
 */
export function requestedAttributes(request: string): RequestAttribute[] {
  const tokens = tokensOf(request);
  const lists: string[][][] = [];
  for (const [at, token] of tokens.entries()) {
    const next = tokens[at + 1];
    if (token === ':' || token === '(' || token === '?') {
      // A list of two or more after a colon, a dash, a question mark or an opening parenthesis.
      const list = listAt(tokens, at + 1, (word) => /^[.;:!?()]$/.test(word));
      if (list && list.length >= 2) lists.push(list);
    } else if (token === 'with') {
      // "products with their prices", "every course with the day…": not "search with nothing typed".
      const before = tokens[at - 1] ?? '';
      const counted = ['every', 'each'].includes(tokens[at - 2] ?? '');
      if (counted || (/[^s']s$/.test(before) && !/(?:ss|us|is)$/.test(before))) {
        const list = listAt(tokens, at + 1, (word) => isPunctuation(word) && word !== ',');
        if (list) lists.push(list);
      }
    } else if ((token === 'their' || /^(?:one|\p{L}+)(?:'s|’s)$/u.test(token)) && next && !isPunctuation(next)) {
      if (token !== 'their' && !['each', 'every'].includes(tokens[at - 1] ?? '')) continue;
      const list = listAt(tokens, at + 1, (word) => isPunctuation(word) && word !== ',');
      if (list) lists.push(list);
    } else if ((token === 'of' || token === 'for') && next && ['each', 'every', 'all', 'the'].includes(next)) {
      // Back from "of"/"for" to the verb, a punctuation mark or another "of".
      const phrase: string[] = [];
      for (let back = at - 1; back >= 0 && phrase.length < 8; back--) {
        const word = tokens[back] as string;
        if (isPunctuation(word) || VERBS.test(word) || word === 'of' || word === 'for') break;
        phrase.unshift(word);
      }
      const list = listAt(phrase, 0, () => false);
      if (list) lists.push(list);
    }
  }
  const attributes: RequestAttribute[] = [];
  for (const item of lists.flat()) {
    const attribute = attributeOf(item);
    if (attribute && !attributes.some((known) => known.written === attribute.written)) attributes.push(attribute);
  }
  return attributes;
}

/** The words of a field's name: `monthly_fee` → monthly, fee; `startDate` → start, date. */
const nameWords = (name: string) =>
  name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter(Boolean);

/** A field the page model did not name (`text`, `text_2`). */
export const unnamedField = (name: string) => /^text(?:_\d+)?$/.test(name);

/** Whether a field named `name` is named for `attribute`: a word of one is a word of the other, or of its group. */
export function namedFor(attribute: RequestAttribute, name: string): boolean {
  const own = new Set(nameWords(name).flatMap(senses));
  return attribute.words.some((word) => senses(word).some((sense) => own.has(sense)));
}

/** A field of an extraction: its name and the values seen in it (samples, or a dry run's values). */
export type SeenField = { name: string; values: unknown[] };

/**
 * Which field holds each attribute: first by name (lexicon.ts); a name not named as such by the
 * field named for the thing listed, the item's link, else the first field; then by the kind of
 * its values (valueKinds.ts; a name is not told by its value), then, when one attribute and one field the page
 * did not name are left, that field. Each field holds one attribute. Answers the field of each
 * attribute held, and the attributes no field holds.
 */
export function coverAttributes(
  attributes: readonly RequestAttribute[],
  fields: readonly SeenField[],
  thing: readonly string[] = [],
): { held: Map<RequestAttribute, string>; missing: RequestAttribute[] } {
  const held = new Map<RequestAttribute, string>();
  const used = new Set<string>();
  const take = (attribute: RequestAttribute, field: SeenField | undefined) => {
    if (!field) return;
    held.set(attribute, field.name);
    used.add(field.name);
  };
  for (const attribute of attributes)
    take(
      attribute,
      fields.find((field) => !used.has(field.name) && namedFor(attribute, field.name)),
    );
  // A name not named as such: a field named for the thing listed ("office" in "every office - name"),
  // or the text of the item's link ("Brook Cottage").
  // Else the first field (a table's first column: "Business" for "their names"), when none of its
  // values is of another kind (a date, a price, a phone…).
  const named = thingField(fields, thing);
  const first = fields[0];
  const otherKinds: ValueKind[] = ['email', 'phone', 'url', 'date', 'money', 'number', 'rating'];
  const firstNames = first && !first.values.some((value) => otherKinds.some((kind) => valueIsOfKind(kind, value))) ? first : undefined;
  for (const attribute of attributes)
    if (!held.has(attribute) && attribute.kind === 'name')
      take(
        attribute,
        [named, fields.find((field) => field.name === 'link'), firstNames].find((field) => field && !used.has(field.name)),
      );
  for (const attribute of attributes) {
    if (held.has(attribute) || !attribute.kind || attribute.kind === 'name') continue;
    const kind = attribute.kind;
    take(
      attribute,
      fields.find((field) => {
        if (used.has(field.name)) return false;
        const records = field.values.map((value) => ({ value }));
        return records.length > 0 && fieldsOfKind(kind, records).length > 0;
      }),
    );
  }
  // One value left that names no kind, and one field the page did not name (its decoration aside:
  // an icon, a "▸"): that field. A kind ("star rating") is held by its name or its values only.
  const left = attributes.filter((attribute) => !held.has(attribute));
  const unnamed = fields.filter(
    (field) =>
      !used.has(field.name) &&
      unnamedField(field.name) &&
      !field.values.every((value) => typeof value === 'string' && !/[\p{L}\p{N}]/u.test(value)),
  );
  if (left.length === 1 && !left[0]?.kind && unnamed.length === 1) take(left[0] as RequestAttribute, unnamed[0]);
  return { held, missing: attributes.filter((attribute) => !held.has(attribute)) };
}

/** The field named for the thing the request lists: `office` when it asks for "every office". */
function thingField(fields: readonly SeenField[], thing: readonly string[]) {
  return fields.find((field) => thing.some((word) => namedFor({ written: word, words: [word], kind: null }, field.name)));
}

/** The words of what the request lists ("every office" → office), which name its records' own name field. */
const thingOf = (request: string, attributes: readonly RequestAttribute[]) => {
  // "the phone numbers of the offices": the noun read is the value asked, not the thing listed.
  const asked = new Set(attributes.flatMap((attribute) => attribute.written.split(' ')));
  return (requestedNoun(request)?.words ?? []).filter((word) => !asked.has(word));
};

/** The fields an extract step reads, with the samples the pages showed of them. */
export function fieldsOfStep(step: ProposalStep, seen: readonly PageModel[]): SeenField[] {
  const fields = new Map<string, unknown[]>();
  const add = (name: string, value?: string) => {
    const values = fields.get(name) ?? [];
    if (value !== undefined) values.push(value);
    fields.set(name, values);
  };
  if (step.action === 'extract_table') {
    for (const page of seen)
      for (const table of page.tables)
        if (table.selector === step.selector) for (const header of table.headers) if (header.trim()) add(header);
    return [...fields].map(([name, values]) => ({ name, values }));
  }
  for (const field of step.fields ?? []) {
    add(field.name);
    for (const page of seen) {
      for (const list of page.lists)
        if (list.itemSelector === step.selector || list.selector === step.selector)
          for (const known of list.fields)
            if (known.selector === field.selector && known.attribute === field.attribute) add(field.name, known.sample);
      for (const detail of page.details) if (detail.selector === field.selector) add(field.name, detail.sample);
    }
  }
  return [...fields].map(([name, values]) => ({ name, values }));
}

/**
 * The attributes of `request` that no extract step of `proposal` holds, by the fields the pages
 * showed. One text (`extract_text`) holds what it holds: the dry run checks it. Empty when the
 * request names none, or every one is held.
 */
export function missingAttributes(proposal: Proposal, request: string, seen: readonly PageModel[]): RequestAttribute[] {
  const attributes = requestedAttributes(request);
  const extracts = proposal.steps.filter((step) => step.action.startsWith('extract_'));
  if (!attributes.length || !extracts.length || extracts.some((step) => step.action === 'extract_text')) return [];
  const thing = thingOf(request, attributes);
  const perStep = extracts.map((step) => coverAttributes(attributes, fieldsOfStep(step, seen), thing).missing);
  // One step holding an attribute is enough: "the title on the list, the price on each page".
  return attributes.filter((attribute) => perStep.every((missing) => missing.includes(attribute)));
}

/** The name field of a record the request lists things of: "products with their prices" names the product too. */
const nameField = (fields: readonly SeenField[], thing: readonly string[]) =>
  fields.find((field) => nameWords(field.name).some((word) => senses('name').includes(word))) ??
  thingField(fields, thing) ??
  fields.find((field) => field.name === 'link');

/**
 * The proposal with each record narrowed to what `request` names: the fields of a list or of each
 * page that hold the request's attributes (and, for a list, the thing's name, asked or not, or else the first
 * field), the others left out. A step whose fields do not hold every attribute is left as it is (the verification ends
 * that job loud); a table keeps its columns.
 */
export function narrowToRequest(proposal: Proposal, request: string, seen: readonly PageModel[]): Proposal {
  const attributes = requestedAttributes(request);
  if (!attributes.length) return proposal;
  const thing = thingOf(request, attributes);
  const dropped = new Map<string, Set<string>>();
  const steps = proposal.steps.map((step, index) => {
    if ((step.action !== 'extract_list' && step.action !== 'extract_fields') || !step.fields?.length) return step;
    const fields = fieldsOfStep(step, seen);
    const { held, missing } = coverAttributes(attributes, fields, thing);
    if (missing.length) return step;
    const keep = new Set(held.values());
    // The thing's own name, unless a value asked is it; or else its first field left (what the item
    // shows first names it: "Harbour").
    const named = nameField(
      fields.filter((field) => keep.has(field.name)),
      thing,
    );
    // One record (a details page, a definition list) is the thing itself: it keeps only what was asked.
    const rest = fields.filter((field) => !keep.has(field.name));
    const name = named || step.action !== 'extract_list' ? null : (nameField(rest, thing) ?? rest[0]);
    if (name) keep.add(name.name);
    const narrowed = step.fields.filter((field) => keep.has(field.name));
    if (!narrowed.length) return step;
    dropped.set(
      step.output ?? `result${index + (proposal.steps[0]?.action === 'goto' ? 0 : 1)}`,
      new Set(step.fields.filter((field) => !keep.has(field.name)).map((field) => field.name)),
    );
    return { ...step, fields: narrowed };
  });
  // The outputs the model declared lose the fields left out too.
  const outputs = proposal.outputs.map((output) => {
    const gone = dropped.get(output.name);
    return gone && output.fields ? { ...output, fields: output.fields.filter((field) => !gone.has(field)) } : output;
  });
  return { ...proposal, steps, outputs };
}

/**
 * The dry run's check of the attributes: every one the request names is held by a field of some
 * output's records, by its name or its values. Answers the attributes no output holds, as written.
 */
export function attributesNotInResult(
  request: string,
  result: Record<string, unknown> | null,
  declaredFields: Record<string, readonly string[]> = {},
): string[] {
  const attributes = requestedAttributes(request);
  if (!attributes.length || !result) return [];
  const thing = thingOf(request, attributes);
  const outputs = Object.entries(result);
  // One value (a heading, a text): not records; the declarations check it.
  if (!outputs.some(([, value]) => Array.isArray(value) || (value && typeof value === 'object'))) return [];
  const missingPer = outputs.map(([output, value]) => {
    const records = (Array.isArray(value) ? value : [value]).filter(
      (item): item is Record<string, unknown> => Boolean(item) && typeof item === 'object' && !Array.isArray(item),
    );
    // A stored result keeps no key order: the fields the analysis declared come first, in its order.
    const declared = declaredFields[output] ?? [];
    const keys = [...new Set(records.flatMap((record) => Object.keys(record)))];
    const names = [...declared.filter((name) => keys.includes(name)), ...keys.filter((name) => !declared.includes(name))];
    const fields = names.map((name) => ({ name, values: records.map((record) => record[name]) }));
    return coverAttributes(attributes, fields, thing).missing;
  });
  return attributes.filter((attribute) => missingPer.every((missing) => missing.includes(attribute))).map((attribute) => attribute.written);
}
