/**
 * Verification that reads the request, not the page's markup. Two checks, held to every model's
 * proposal (conversation.ts) and to every generation's dry run (outputCheck.ts):
 *
 * - **The kind of value.** The request's noun phrase may name a kind (lexicon.ts): "e-mail
 *   addresses", "phone numbers", "prices", "names". What is extracted must hold values of that kind
 *   (valueKinds.ts): a column of phone numbers is not e-mail addresses.
 * - **The qualifiers.** The other words of what is asked ("savings account" in "the interest rate of
 *   every savings account", "manager" in "each branch manager's e-mail") must be found on the page
 *   near what is extracted: the page's title and headings, the listing's caption, heading, headers,
 *   field names and labels, or the text of a control the steps chose (a tab, an option).
 *
 * When one fails the job ends loud, naming the words it could not find, as the user wrote them.
 */
import type { PageModel } from '../page/pageModel.ts';
import { readPromptValues } from '../promptValues.ts';
import type { Proposal, ProposalStep } from '../proposal.ts';
import { kindName, kindOfWords, namesKind, senses, type ValueKind } from './lexicon.ts';
import { missingAttributes, requestedAttributes } from './requestAttributes.ts';
import { DETERMINERS, GENERIC, PHRASE_END, requestedNoun, stems } from './requestReading.ts';
import { fieldsOfKind, valueIsOfKind } from './valueKinds.ts';

/** Words that narrow nothing a page would show: "the matching books", "the upcoming events". */
const NOT_QUALIFIERS = new Set(
  `matching upcoming latest new newest recent current available other first last top best main old oldest various different own
  individual listed shown visible next previous following open active total overall whole single same public official actual
  some many most more few each every all its their his her our your my`.split(/\s+/),
);
/** Words that name where a thing is, not what it is: "in the kitchen category" asks for kitchen. */
const PLACE_WORDS = new Set(
  `category categories section sections department departments tab tabs panel panels group groups type types kind kinds area feed
  page pages site website list lists table tables menu dropdown filter box`.split(/\s+/),
);

/** What a request asks for, in its own words. */
export type RequestTerms = {
  /** The noun phrase asked for, as written ("branch manager e-mail address"). */
  phrase: string;
  /** The kind of value it names, and the words that name it ("e-mail address"). */
  kind: { kind: ValueKind; words: string[] } | null;
  /** The words that narrow it, each phrase as written: "branch manager", "savings account". */
  qualifiers: string[];
  /** What the request's noun is "of" ("of every savings account" → savings account), when it says. */
  of: string | null;
};

const tokensOf = (request: string) =>
  request
    .replace(/\b[a-z][\w+.-]*:\/\/\S+/gi, ' , ')
    .replace(/\{\{[^}]*\}\}|"[^"]*"|“[^”]*”|(?<![\p{L}\p{N}])'[^'\n]*'(?![\p{L}\p{N}])/gu, ' , ')
    .replace(/\S+@\S+/g, ' , ')
    .toLowerCase()
    .match(/[a-z][a-z0-9'’-]*|[,.;:!?()]/g) ?? [];

/** Verbs a hurried request runs into its noun phrase ("open every product n get its details"). */
const VERB_WORDS =
  /^(?:extract|list|get|collect|read|scrape|return|show|fetch|give|grab|pull|find|want|need|download|export|copy|gather|see|open|visit|follow|go|click|pls|please|plz|gimme|thx)$/;
const content = (word: string) =>
  !GENERIC.has(word) && !DETERMINERS.has(word) && !NOT_QUALIFIERS.has(word) && !VERB_WORDS.test(word) && word.length > 1;

/**
 * The terms of `request`: its noun phrase (requestReading.ts), the kind of value it names, and the
 * words that qualify it, in the noun phrase ("branch manager's e-mail") or after it ("of every
 * savings account", "in the kitchen category"). Null when it names nothing in particular.
 */
export function readRequestTerms(request: string): RequestTerms | null {
  const noun = requestedNoun(request);
  if (!noun?.words.length) return null;
  // A value the request gives (a search keyword, "find dune books") is typed, not looked for.
  const given = new Set(
    readPromptValues(request, { placeholders: true })
      .values.filter((value) => !value.secret)
      .flatMap((value) => value.value.toLowerCase().split(/\s+/)),
  );
  const words = noun.words.filter((word) => !VERB_WORDS.test(word) && !given.has(word));
  if (!words.length) return null;
  const kind = kindOfWords(words);
  const kindWords = new Set(kind?.words ?? []);
  // Without a kind, the last word is the thing asked for; the words before it narrow it.
  // A plural before the kind names the things themselves, listed with it ("products + prices"),
  // which the listing's fit already reads (requestFit.ts); a singular narrows ("manager e-mail").
  const plural = (word: string) => /[^s]s$/.test(word) && !/(?:us|is)$/.test(word);
  const modifiers = words.filter(
    (word, index) => !kindWords.has(word) && (kind ? !plural(word) : index < words.length - 1) && content(word),
  );
  const qualifiers: string[] = [];
  if (modifiers.length) qualifiers.push(modifiers.join(' '));
  // The phrase after the noun: "… of every savings account", "… in the kitchen category".
  const tokens = tokensOf(request).map((token) => token.replace(/['’]s$/, ''));
  const last = words[words.length - 1] as string;
  let of: string | null = null;
  const at = tokens.indexOf(last);
  if (at >= 0 && ['of', 'for', 'in', 'at'].includes(tokens[at + 1] ?? '')) {
    const phrase: string[] = [];
    for (let index = at + 2; index < tokens.length && phrase.length < 3; index++) {
      const token = tokens[index] as string;
      if (/^[,.;:!?()]$/.test(token) || PHRASE_END.has(token)) break;
      if (DETERMINERS.has(token) || NOT_QUALIFIERS.has(token)) {
        if (phrase.length) break;
        continue;
      }
      phrase.push(token);
    }
    const kept = phrase.filter((word) => content(word) && !PLACE_WORDS.has(word));
    if (kept.length) {
      of = kept.join(' ');
      qualifiers.push(of);
    }
  }
  return { phrase: words.join(' '), kind, qualifiers, of };
}

/** The qualifiers of `terms` that `near` (what is near the extraction) does not name, as the user wrote them. */
export function missingQualifiers(terms: RequestTerms, near: string): string[] {
  const there = stems(near);
  const found = (word: string) => senses(word).some((sense) => there.has(sense));
  // A page's words are read apart at hyphens ("Fixed-rate" → fixed, rate): so is a hyphenated qualifier.
  const foundWord = (word: string) => found(word) || (word.includes('-') && word.split('-').filter(Boolean).every(found));
  return terms.qualifiers.filter((phrase) => !phrase.split(' ').every(foundWord));
}

/** Every text of a page that names what is on it: its title, headings, listings' names and labels, controls. */
function pageWords(page: PageModel) {
  return [
    page.title,
    ...page.headings.map((heading) => heading.text),
    ...page.tables.flatMap((table) => [table.caption ?? '', table.heading ?? '', ...table.headers]),
    ...page.lists.flatMap((list) => [list.heading ?? '', ...list.fields.map((field) => field.name)]),
    ...page.details.map((detail) => detail.name),
  ].join(' ');
}

/** The text of the element `selector` names on the pages seen: a button, a link, a control, a field's label or an option. */
function controlText(selector: string | undefined, value: string | undefined, seen: readonly PageModel[]) {
  if (!selector) return '';
  const texts: string[] = [];
  for (const page of seen) {
    for (const element of [...page.buttons, ...page.links, ...page.navigation.flatMap((nav) => nav.links)])
      if (element.selector === selector) texts.push(element.text);
    for (const control of page.controls ?? []) {
      if (control.selector !== selector) continue;
      texts.push(control.text);
      const option = control.options?.find((candidate) => candidate.value === value || candidate.text === value);
      if (option) texts.push(option.text);
    }
    for (const form of page.forms)
      for (const input of form.inputs)
        if (input.selector === selector) texts.push(input.label, value?.startsWith('{{') ? '' : (value ?? ''));
  }
  return texts.join(' ');
}

/** What is near an extract step: the pages it reads from, and the text of every control the steps chose before it. */
export function nearExtraction(proposal: Proposal, step: ProposalStep, seen: readonly PageModel[]): string {
  const selectors = [step.selector, step.pagesSelector].filter(Boolean);
  const holding = seen.filter(
    (page) =>
      page.tables.some((table) => selectors.includes(table.selector) || selectors.includes(table.linkSelector)) ||
      page.lists.some(
        (list) => selectors.includes(list.itemSelector) || selectors.includes(list.selector) || selectors.includes(list.linkSelector),
      ) ||
      page.details.some((detail) => (step.fields ?? []).some((field) => field.selector === detail.selector)),
  );
  const controls = proposal.steps
    .slice(0, proposal.steps.indexOf(step))
    .filter((other) => ['click', 'select', 'fill', 'press'].includes(other.action))
    .map((other) => controlText(other.selector, other.value, seen));
  // A detail page's fields are read on pages the list links to: the item's page holds its words.
  const pages = holding.length ? holding : seen.slice(-1);
  return [...pages.map(pageWords), ...controls].join(' ');
}

/** The names and samples of what an extract step reads: its table's headers, its list's or page's fields. */
function stepFields(step: ProposalStep, seen: readonly PageModel[]): { names: string[]; samples: string[]; table: boolean } {
  const names: string[] = [];
  const samples: string[] = [];
  let table = false;
  for (const page of seen) {
    for (const candidate of page.tables)
      if (candidate.selector === step.selector) {
        table = true;
        names.push(...candidate.headers);
      }
    for (const list of page.lists)
      if (list.itemSelector === step.selector || list.selector === step.selector)
        for (const field of list.fields) {
          names.push(field.name);
          samples.push(field.sample);
        }
    for (const detail of page.details)
      if ((step.fields ?? []).some((field) => field.selector === detail.selector)) {
        names.push(detail.name);
        samples.push(detail.sample);
      }
  }
  for (const field of step.fields ?? []) names.push(field.name);
  return { names, samples, table };
}

/** Whether what an extract step reads can hold values of `kind`: a column or label named for it, or a sample of it. */
export function stepHoldsKind(kind: ValueKind, step: ProposalStep, seen: readonly PageModel[]): boolean {
  // One text (a heading, a title): the page model shows no sample of it; the dry run checks its value.
  if (step.action === 'extract_text') return true;
  const { names, samples, table } = stepFields(step, seen);
  if (names.some((name) => namesKind(name, kind))) return true;
  if (samples.some((sample) => valueIsOfKind(kind, sample))) return true;
  // A table shows no samples in its page model: a name may be in any column of text; the dry run checks the values.
  return table && kind === 'name';
}

const quoted = (words: string) => `'${words}'`;
const kindPlural = (kind: ValueKind) =>
  (kindName[kind].endsWith('s') ? `${kindName[kind]}es` : `${kindName[kind]}s`).replace(/^amount of moneys$/, 'amounts of money');

/**
 * What was asked, in the user's words: "'e-mail address' of a 'branch manager'",
 * "'interest rate' of a 'savings account'".
 */
export function askedFor(terms: RequestTerms) {
  return terms.of ? `${quoted(terms.phrase)} of a ${quoted(terms.of)}` : quoted(terms.phrase);
}

/**
 * The sentence a job that cannot verify its extraction against the request ends with: what was
 * asked, the words it could not find (as the user wrote them), and what the page shows instead.
 */
export function notFoundMessage(
  terms: RequestTerms,
  problem: { missing: string[]; kind: ValueKind | null; attributes?: string[]; pages?: string | null },
  shows: string,
) {
  const parts: string[] = [];
  if (problem.attributes?.length) parts.push(`no field of what it extracts holds ${problem.attributes.map(quoted).join(' or ')}`);
  if (problem.pages)
    parts.push(
      `the request asks for ${quoted(problem.pages)}, but nothing goes on past the first page (no pager link or button was found)`,
    );
  if (problem.missing.length) parts.push(`nothing near what it shows says ${problem.missing.map(quoted).join(' or ')}`);
  if (problem.kind)
    parts.push(`no ${kindName[problem.kind]} is there for ${quoted(terms.kind?.words.join(' ') ?? kindName[problem.kind])}`);
  // Only values of each record or pages missing: what was asked is there, not all of it.
  const lead = problem.missing.length || problem.kind ? `found no ${askedFor(terms)} on the page` : 'could not extract all that was asked';
  return `${lead}: ${parts.join('; ')}; it shows ${shows}`;
}

/**
 * The problems of a proposal's extraction against the request's terms: the qualifiers not found
 * near any extract step, and whether no step holds the kind of value named. Null when it fits
 * (or the request names nothing to verify).
 */
export function verifyAgainstRequest(
  proposal: Proposal,
  request: string,
  seen: readonly PageModel[],
): { terms: RequestTerms; missing: string[]; kind: ValueKind | null; attributes: string[]; pages: string | null } | null {
  const extracts = proposal.steps.filter((step) => step.action.startsWith('extract_'));
  if (!extracts.length) return null;
  // The values named for each record ("name, monthly cost, how much data"): each held by a field.
  const attributes = missingAttributes(proposal, request, seen).map((attribute) => attribute.written);
  // "every page", "all the pages": a listing read on its first page only is not that.
  const everyPage = everyPageWords(request);
  const pages = everyPage && !extracts.some((step) => step.paging || step.pagesSelector) ? everyPage : null;
  const terms = readRequestTerms(request) ?? termsOfAttributes(request);
  if (!terms) return null;
  // The qualifiers every extract step misses (one step naming them is enough).
  const missingPerStep = extracts.map((step) => missingQualifiers(terms, nearExtraction(proposal, step, seen)));
  const missing = terms.qualifiers.filter((phrase) => missingPerStep.every((list) => list.includes(phrase)));
  const kind = terms.kind && !extracts.some((step) => stepHoldsKind(terms.kind?.kind as ValueKind, step, seen)) ? terms.kind.kind : null;
  return missing.length || kind || attributes.length || pages ? { terms, missing, kind, attributes, pages } : null;
}

/** Terms for a request whose noun phrase names nothing, but which names values: "whats on? name, when and place". */
function termsOfAttributes(request: string): RequestTerms | null {
  const attributes = requestedAttributes(request);
  if (!attributes.length) return null;
  return { phrase: attributes.map((attribute) => attribute.written).join(', '), kind: null, qualifiers: [], of: null };
}

/** The words by which a request asks for every page of a listing ("on all pages", "every page"), or null. */
export function everyPageWords(request: string): string | null {
  const text = request.replace(/\b[a-z][\w+.-]*:\/\/\S+/gi, ' ');
  const found =
    /\b(?:all|every|each)\s+(?:of\s+)?(?:the\s+)?pages?\b/i.exec(text) ??
    /\b(?:to|till|until)\s+the\s+(?:last|final)\s+(?:page|one)\b/i.exec(text);
  return found ? found[0] : null;
}

/** Whether any page seen names the words of `phrase` anywhere in what its page model shows. */
export function anyPageNames(phrase: string, seen: readonly PageModel[]): boolean {
  return seen.some((page) => {
    const all = stems(
      [
        pageWords(page),
        ...page.buttons.map((button) => button.text),
        ...page.links.map((link) => link.text),
        ...page.navigation.flatMap((nav) => nav.links.map((link) => link.text)),
        ...(page.controls ?? []).flatMap((control) => [control.text, ...(control.options ?? []).map((option) => option.text)]),
        ...page.lists.flatMap((list) => list.fields.map((field) => field.sample)),
        ...page.details.map((detail) => detail.sample),
      ].join(' '),
    );
    const found = (word: string) => senses(word).some((sense) => all.has(sense));
    return phrase.split(' ').every((word) => found(word) || (word.includes('-') && word.split('-').filter(Boolean).every(found)));
  });
}

/**
 * The dry run's check of the kind: when the request names a kind of value, some output must hold
 * it in one of its fields (records) or be one (a value). Answers the sentence of the mismatch, or
 * null when it holds (or no kind is named).
 */
export function kindMismatch(request: string, result: Record<string, unknown> | null): string | null {
  const terms = readRequestTerms(request);
  if (!terms?.kind) return null;
  const { kind } = terms.kind;
  const values = Object.values(result ?? {});
  for (const value of values) {
    if (Array.isArray(value)) {
      const records = value.filter(
        (item): item is Record<string, unknown> => Boolean(item) && typeof item === 'object' && !Array.isArray(item),
      );
      if (records.length && fieldsOfKind(kind, records).length) return null;
    } else if (value && typeof value === 'object') {
      if (fieldsOfKind(kind, [value as Record<string, unknown>]).length) return null;
    } else if (valueIsOfKind(kind, value)) return null;
  }
  return `the request asks for ${quoted(terms.kind.words.join(' '))}, but no field of the result holds ${kindPlural(kind)}`;
}
