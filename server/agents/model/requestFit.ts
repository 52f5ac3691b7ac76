/**
 * Whether a proposal reads what its request asks for, judged from the pages the analysis saw. It
 * holds every model's proposal, not only builtin's, to the readings builtin itself follows: a
 * listing the request names by its noun is the one read; a listing nothing names that noun is read
 * only as builtin would take it (pageFitsRequest); and a request for each item's own page visits
 * those pages. A proposal that misses either is refused with a sentence the model can act
 * on, so a model that picks the wrong table ends loud (refused until its step bound, or
 * `goalNotFound`), never with a version that reads the wrong data.
 */
import type { PageModel } from '../page/pageModel.ts';
import type { Proposal } from '../proposal.ts';
import { listText, mentions, pageFitsRequest, requestedNoun, tableText, wantsItemPages } from './requestReading.ts';

/** The problems of `proposal` against `request`, each a sentence for the model; none when it fits. */
export function requestFitProblems(proposal: Proposal, request: string, seen: readonly PageModel[]): string[] {
  const problems: string[] = [];
  if (wantsItemPages(request) && !proposal.steps.some((step) => step.action === 'extract_fields' && step.pagesSelector)) {
    problems.push(
      'the request asks for what each item’s own page shows, but no step visits those pages: use extract_fields with pagesSelector (the links to the items’ pages) and the fields of an item’s page, or answer {"goalNotFound": "why"}',
    );
  }
  const noun = requestedNoun(request);
  if (!noun?.words.length) return problems;
  for (const [index, step] of proposal.steps.entries()) {
    if (step.action !== 'extract_table' && step.action !== 'extract_list') continue;
    // The pages the listing was seen on; the last one names the listings beside it.
    const holding = seen.filter((model) =>
      step.action === 'extract_table'
        ? model.tables.some((table) => table.selector === step.selector)
        : model.lists.some((list) => list.itemSelector === step.selector),
    );
    const page = holding.at(-1);
    if (!page) continue;
    const acted = proposal.steps.some((other) => ['fill', 'click', 'press', 'select'].includes(other.action));
    // Any page of the listing may name it (the first page's "Older stories" link, not the last's).
    if (!holding.some((model) => pageFitsRequest(request, model, acted).acceptable)) {
      problems.push(
        `step ${index + 1} (${step.action}) reads ${JSON.stringify(step.selector)}, but nothing on ${page.url} names ${noun.words.join(' ')}, which the request asks for: read a listing that holds them, or, when the pages do not hold them, answer {"goalNotFound": "why"}`,
      );
      continue;
    }
    const named = [
      ...page.tables
        .filter((table) => mentions(noun.words, tableText(table)))
        .map((table) => ({ selector: table.selector, what: 'table' })),
      ...page.lists.filter((list) => mentions(noun.words, listText(list))).map((list) => ({ selector: list.itemSelector, what: 'list' })),
    ];
    if (!named.length || named.some((candidate) => candidate.selector === step.selector)) continue;
    problems.push(
      `step ${index + 1} (${step.action}) reads ${JSON.stringify(step.selector)}, but the request asks for ${noun.words.join(' ')}, which ${named
        .map((candidate) => `the ${candidate.what} ${JSON.stringify(candidate.selector)}`)
        .join(' and ')} on ${page.url} name${named.length === 1 ? 's' : ''}: read that, or answer {"goalNotFound": "why"}`,
    );
  }
  return problems;
}
