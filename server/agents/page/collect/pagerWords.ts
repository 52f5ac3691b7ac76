import { clean } from './text.ts';

/** The words of a pager control: its cleaned text without arrows, guillemets, bars and ellipses. */
export function bare(text: string) {
  return clean(text)
    .replace(/[›»«‹←→<>|…]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** A page number: "3", "Page 3". */
export const NUMBER_WORD = /^(?:page )?\d+$/i;
/** A link onwards: "Next", "Next page", "Older posts", "More stories". */
export const NEXT_WORD =
  /^(?:next(?: page)?|older(?: (?:posts|stories|entries|articles|items|results))?|more (?:posts|stories|articles))$/i;
/** A link back or to an end: "Previous", "Newer posts", "First", "Last". */
export const BACK_WORD = /^(?:prev|previous(?: page)?|newer(?: (?:posts|stories|entries|articles|items|results))?|first|last)$/i;
/** A button that loads more of the listing: "More", "Load more", "Show more results", "View 20 more". */
export const MORE_WORD = /^(?:(?:load|show|view|see) )?more(?: \w+)?$|^(?:load|show|view|see) \w+ more$/i;

/** Whether a link's text is one a pager's links have: a number, onwards or back. */
export function pagerWord(text: string) {
  const word = bare(text);
  return NUMBER_WORD.test(word) || NEXT_WORD.test(word) || BACK_WORD.test(word);
}
