/**
 * Reading what a request asks for, in one place: its noun ("get me all orders" → orders), whether
 * it asks for records or each item's own page, whether it names a place to go or an empty search,
 * and whether a page's listings can stand for it. builtin follows these readings, and
 * requestFit.ts and outputCheck.ts hold every model's proposal to the same ones.
 */
import type { PageList, PageModel, PageTable } from '../page/pageModel.ts';
import { senses, stem } from './lexicon.ts';

/** A search asked for without a keyword: "all results of the search form", "submit the search empty". */
export const wantsEmptySearch = (request: string) =>
  /\b(?:search|results?)\b/i.test(request) &&
  /\b(?:all|every|empty|blank|without (?:a )?(?:keyword|query|term))\b|\bsubmit\b/i.test(request);

/**
 * The request asks for each item's own page ("open each company", "the details page of each
 * company", "visit every product's page"), not for what a listing shows: a proposal that visits
 * none of them is wrong, whatever it extracts.
 */
export const wantsItemPages = (request: string) =>
  /\b(?:open|visit|follow|click)\s+(?:on\s+)?(?:each|every)\b|\bdetails?\s+pages?\b|\b(?:each|every)\s+(?!pages?\b)[\p{L}\p{N}-]+(?:'s|’s)?\s+(?:own\s+)?(?:details?\s+)?page\b/iu.test(
    request.replace(/\b[a-z][\w+.-]*:\/\/\S+/gi, ' , '),
  );

export const wantsDetails = (request: string) =>
  /\bdetails?\b|\beach\b[^.]*\bpages?\b|\b(?:open|visit|follow)\s+(?:each|every)\b/i.test(request);

/** Whether the request names `text` as a place to go: "go to Garden then Tools", "open Reports", "Garden > Tools". */
export const namesPlace = (request: string, text: string) =>
  text.length >= 3 &&
  text.length <= 40 &&
  new RegExp(
    `(?:\\bgo(?:ing)? to|\\bopen|\\bclick(?: on)?|\\bthen|\\bnavigate to|\\bvisit|[>›→»])\\s+(?:the\\s+)?${text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&')}(?![\\p{L}\\p{N}])`,
    'iu',
  ).test(request.replace(/\b[a-z][\w+.-]*:\/\/\S+/gi, ' '));

/** Words that name a container or nothing in particular, not what is asked for. */
export const GENERIC = new Set(
  `table tables list lists row rows item items record records entry entries data result results everything all things stuff content
  contents details detail info information value values text page pages site website thing one ones field fields form forms search`.split(
    /\s+/,
  ),
);
export const DETERMINERS = new Set(
  `all every each the a an of my our their your its this these those any latest current whole entire full complete me us them em`.split(
    /\s+/,
  ),
);
/** Where the noun phrase after the verb ends. */
export const PHRASE_END = new Set(
  `from on in at with and then to for by into onto pls please plz thx thanks as which that where who when if or but it they we you u i are is was were be been being has have had do does did can could will would should may might must`.split(
    /\s+/,
  ),
);
const VERBS =
  /\b(?:extract|list|get|collect|read|scrape|return|show|fetch|give|grab|pull|find|want|need|download|export|copy|gather|see|open|visit|follow)\b/g;

/** `story` → `stories`, `box` → `boxes`, `orders` stays. */
function plural(word: string) {
  if (/s$/.test(word) && !/(?:ss|us|is)$/.test(word)) return word;
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  if (/(?:s|x|z|ch|sh)$/.test(word)) return `${word}es`;
  return `${word}s`;
}
export const stems = (text: string) =>
  new Set(
    (
      text
        .replace(/([a-z])([A-Z])/g, '$1 $2')
        .toLowerCase()
        .match(/[a-z0-9]+/g) ?? []
    ).map(stem),
  );

/**
 * What the request asks for, as the words of its noun phrase: "get me all orders" → orders, "list
 * the team members" → team members, "every story on the news page" → story, "orders pls" →
 * orders, "read the details of each product" → product. Addresses, quoted values and
 * placeholders are left out first.
 */
export function requestedNoun(request: string): { words: string[]; name: string } | null {
  // An aside in parentheses ("(theres a show more btn)") says how the page works, not what is
  // asked for: it is read only when the rest names nothing.
  const aside = /\([^()]*\)/g;
  if (aside.test(request)) return nounOf(request.replace(aside, ' , ')) ?? nounOf(request);
  return nounOf(request);
}

function nounOf(request: string): { words: string[]; name: string } | null {
  const text = request
    // An address ends the phrase it stands in ("Open http://…, go to …").
    .replace(/\b[a-z][\w+.-]*:\/\/\S+/gi, ' , ')
    .replace(/\{\{[^}]*\}\}|"[^"]*"|“[^”]*”|(?<![\p{L}\p{N}])'[^'\n]*'(?![\p{L}\p{N}])/gu, ' , ')
    .replace(/\S+@\S+/g, ' , ')
    .toLowerCase();
  const tokens = text.match(/[a-z][a-z0-9'-]*|[,.;:!?]/g) ?? [];
  const phraseAt = (from: number) => {
    const phrase: string[] = [];
    for (let at = from; at < tokens.length; at++) {
      const token = tokens[at] as string;
      if (/^[,.;:!?]$/.test(token) || PHRASE_END.has(token)) {
        // "the list of orders", "the details of each product": the phrase goes on after `of`.
        if (token === 'of' || (token === 'on' && !phrase.length)) continue;
        break;
      }
      if (token === 'of') {
        if (phrase.every((word) => GENERIC.has(word))) {
          phrase.length = 0;
          continue;
        }
        break;
      }
      if (DETERMINERS.has(token)) {
        if (phrase.length && token !== 'of') break;
        continue;
      }
      phrase.push(token.replace(/'s$/, ''));
      if (phrase.length >= 4) break;
    }
    return phrase;
  };
  // Counted one by one ("every story", "each product"), the output is named in the plural.
  const named = (phrase: string[], counted = false) => {
    const words = phrase.filter((word) => !GENERIC.has(word) && word.length > 1);
    const last = words[words.length - 1];
    return last ? { words, name: (counted ? plural(last) : last).replace(/[^a-z0-9_]/g, '').slice(0, 60) } : null;
  };
  // Nothing in particular: "list the results", "show all results of the search form".
  const generic = (from: number) => {
    for (let at = from; at < tokens.length && !/^[,.;:!?]$/.test(tokens[at] as string); at++) {
      const token = tokens[at] as string;
      if (GENERIC.has(token) && /s$/.test(token)) return { words: [], name: token };
    }
    return null;
  };
  const counted = (from: number) => tokens.slice(from, from + 5).some((token) => token === 'every' || token === 'each');
  const punctuation = (token: string | undefined) => token === undefined || /^[,.;:!?]$/.test(token);
  // `list` ending a clause after other words is a noun: "staff phone list" (not "just open <address>").
  const endsNounPhrase = (index: number) => tokens[index] === 'list' && punctuation(tokens[index + 1]) && !punctuation(tokens[index - 1]);
  // "show more", "see more": the name of a button, not a request.
  const verbs = [...text.matchAll(VERBS)]
    .map((match) => text.slice(0, match.index).match(/[a-z][a-z0-9'-]*|[,.;:!?]/g)?.length ?? 0)
    .filter((index) => tokens[index + 1] !== 'more' && !endsNounPhrase(index));
  for (const index of verbs) {
    const found = named(phraseAt(index + 1), counted(index + 1));
    if (found) return found;
  }
  // No verb before it: "every story on the news page", "orders pls".
  for (const [index, token] of tokens.entries()) {
    if (['all', 'every', 'each'].includes(token)) {
      const found = named(phraseAt(index + 1), token !== 'all');
      if (found) return found;
    }
  }
  const NOT_NOUNS =
    /^(?:pls|please|plz|thanks|thx|this|its|is|was|has|does|as|us|yes|status|always|sometimes|perhaps|nevertheless|less|unless|always)$/;
  const plurals = tokens.filter(
    (token) => /^[a-z]{3,}s$/.test(token) && !/(?:ss|us|is)$/.test(token) && !NOT_NOUNS.test(token) && !GENERIC.has(token),
  );
  if (plurals.length) {
    const word = plurals[0] as string;
    return { words: [word], name: word };
  }
  // No verb at all: a clause that is one bare noun phrase naming a listing ("…/directory staff phone
  // list"), named for what it holds (its first word); not one word ("screenshot"), not words a
  // determiner or a preposition breaks ("take a screenshot").
  if (!verbs.length) {
    const clauses = tokens.join(' ').split(/\s*[,.;:!?]\s*/);
    for (const clause of clauses) {
      const words = clause.split(' ').filter(Boolean);
      if (words.length < 2 || words.length > 4 || !/^(?:list|table|rows|records|entries|items)$/.test(words.at(-1) as string)) continue;
      if (words.some((word) => DETERMINERS.has(word) || PHRASE_END.has(word))) continue;
      const found = named(words.map((word) => word.replace(/'s$/, '')));
      if (found) return { ...found, name: (found.words[0] as string).replace(/[^a-z0-9_]/g, '').slice(0, 60) };
    }
  }
  for (const index of verbs) {
    const found = generic(index + 1);
    if (found) return found;
  }
  return null;
}

/**
 * Whether `text` names one of `words`: singular or plural alike, or by a word of the same group of
 * the lexicon (lexicon.ts: "name" is named by a "title", "price" by a "cost").
 */
export const mentions = (words: string[], text: string) => {
  const inText = stems(text);
  return words.some((word) => senses(word).some((sense) => inText.has(sense)));
};
/**
 * What an `<article>` item is, in the HTML standard's own words: "a forum post, a magazine or
 * newspaper article, a blog entry, a user-submitted comment" (and a news story).
 */
const ARTICLE_WORDS = 'post article entry story comment';
export const listText = (list: PageList) =>
  `${list.selector} ${list.heading ?? ''} ${list.fields.map((field) => field.name).join(' ')}${
    /(?:^|[\s>])article$/.test(list.itemSelector) ? ` ${ARTICLE_WORDS}` : ''
  }`;
export const tableText = (table: PageTable) => `${table.caption ?? ''} ${table.heading ?? ''} ${table.headers.join(' ')} ${table.selector}`;

/**
 * Whether a request asks for records rather than one value: it names a list or table, says every,
 * all or each, or reads a plural noun ("read the orders", "extract the stories").
 */
export function asksForRecords(request: string): boolean {
  const text = request.replace(/\{\{[^}]*\}\}|"[^"]*"|https?:\/\/\S+/g, ' ');
  if (/\b(list|lists|listing|table|tables|rows|records|every|all|each)\b/i.test(text)) return true;
  const verb = '(?:extract|read|get|scrape|collect|fetch|show|find|pull|grab|copy|export|download|gather|see|return)';
  const phrase = new RegExp(`\\b${verb}\\s+(?:(?:the|my|our|their|its|his|her|any|those|these)\\s+)?((?:[a-z-]+\\s*){1,3})`, 'gi');
  const plural = (word: string) => word === 'news' || (/[^su]s$/.test(word) && !/(ss|us|is|ous)$/.test(word));
  for (const [, words] of text.matchAll(phrase)) {
    if ((words as string).toLowerCase().split(/\s+/).some(plural)) return true;
  }
  return false;
}

/**
 * Whether the listings of `page` can stand for what `request` asks for: one of them names its noun
 * (`fitting`); or none does, and the page is named for it (`pageNamed`: its address, title,
 * headings, pager or buttons, as "Older stories"), nothing specific was asked, or the prompt's own
 * steps (`acted`: a login, a search) led to the page's one listing. Every model's proposal is held
 * to it too (requestFit.ts).
 */
export function pageFitsRequest(request: string, page: PageModel, acted: boolean) {
  const noun = requestedNoun(request);
  const specific = Boolean(noun?.words.length);
  const nounNamed = (text: string) => specific && mentions(noun?.words ?? [], text);
  const tables = page.tables.filter((table) => table.rowCount > 0);
  const fitting = specific && [...tables.map(tableText), ...page.lists.map(listText)].some(nounNamed);
  // The page as a whole: its address, title and headings (the main one alone, for what the request names).
  const path = new URL(page.url, 'http://page.invalid').pathname;
  // Its pager and buttons name what the listing holds too ("Older stories", "Show more events").
  const pagerWords = `${page.pagination?.next?.text ?? ''} ${page.buttons.map((button) => button.text).join(' ')}`;
  const pageNamed = nounNamed(`${path} ${page.title} ${page.headings.map((h) => h.text).join(' ')} ${pagerWords}`);
  // The request names the page itself ("every story on the news page"), its address aside.
  const pageWords = stems(
    `${path} ${page.title} ${page.headings
      .filter((h) => h.level === 1)
      .map((h) => h.text)
      .join(' ')}`,
  );
  const requestNamesPage = [...stems(request.replace(/\b[a-z][\w+.-]*:\/\/\S+/gi, ' '))].some(
    (word) =>
      word.length > 2 &&
      !GENERIC.has(word) &&
      !DETERMINERS.has(word) &&
      !/^(?:open|go|visit|get|list|extract|read)$/.test(word) &&
      pageWords.has(word),
  );
  // The groups of a list read as one (an accordion's panels) are one candidate, with it.
  const candidates = tables.length + page.lists.filter((list) => !list.groupOf).length;
  const acceptable = fitting || !specific || pageNamed || (candidates === 1 && (acted || requestNamesPage));
  return { fitting, pageNamed, acceptable };
}
