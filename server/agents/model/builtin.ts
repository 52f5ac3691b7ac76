/**
 * `builtin`: the rule-based proposer. It is not a language model, and says so in the catalog; it
 * speaks the AI SDK's model interface so it runs on the same code path as every model (tool calls,
 * structured output, messages, logs). It works offline and always answers the same way for the
 * same pages and prompt, which is what makes the chain testable.
 *
 * Analysis: read the page model; when the prompt gives values for a login or search form there, fill
 * it in and submit it (secret values only as `{{name}}`, which the browser host fills in); when the
 * prompt quotes the text of a link there, follow it; then, when the listing is paged, walk it (follow the
 * pager, click "more", scroll) so the page models hold every page; then propose the steps taken and
 * the extraction of the table or list that best fits the prompt, with the paging the walk used.
 * When nothing on the page fits what the prompt asks for, it answers `{"goalNotFound": …}` with
 * what the page does show, never the page's heading in place of the data.
 * Generation: `sourceFromProposal` of the analysis.
 */
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4Content, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { NAME_PATTERN } from '../../pipelines/language.ts';
import type { PageControl, PageForm, PageList, PageModel, PageTable } from '../page/pageModel.ts';
import { readPromptValues } from '../promptValues.ts';
import type { GoalNotFound, OutputDeclaration, Paging, Proposal, ProposalStep } from '../proposal.ts';
import { sourceFromProposal } from '../proposal.ts';
import { failed, requestText, tokenUsage, toolCaller, toolEvents } from './promptReading.ts';
import {
  listText,
  mentions,
  namesPlace,
  pageFitsRequest,
  requestedNoun,
  stems,
  tableText,
  wantsDetails,
  wantsEmptySearch,
  wantsItemPages,
} from './requestReading.ts';
import { notFoundMessage, verifyAgainstRequest } from './verification.ts';

/** A rough size in tokens (4 characters each), so usage and limits mean something for builtin too. */
const tokens = (text: string) => Math.ceil(text.length / 4);

/** The AI SDK model of `builtin`, for analysis or for generation. */
export function builtinModel(role: 'analysis' | 'generation'): LanguageModelV4 {
  return {
    specificationVersion: 'v4',
    provider: 'builtin',
    modelId: `builtin-${role}`,
    supportedUrls: {},
    async doGenerate(options: LanguageModelV4CallOptions) {
      const promptText = JSON.stringify(options.prompt);
      const content: LanguageModelV4Content[] =
        role === 'analysis' ? analysisTurn(options.prompt, toolCaller(options.prompt, 'builtin')) : generationTurn(options.prompt);
      const answer = JSON.stringify(content);
      const toolCalls = content.some((part) => part.type === 'tool-call');
      return {
        content,
        finishReason: { unified: toolCalls ? 'tool-calls' : 'stop', raw: undefined },
        usage: tokenUsage(tokens(promptText), tokens(answer)),
        warnings: [],
      };
    },
    async doStream() {
      throw new Error('builtin does not stream');
    },
  };
}

const words = (text: string) => new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? []);
const overlap = (a: Set<string>, text: string) =>
  [...words(text)].filter((word) => a.has(word) || a.has(`${word}s`) || a.has(word.replace(/s$/, ''))).length;

function analysisTurn(prompt: LanguageModelV4Prompt, call: ReturnType<typeof toolCaller>): LanguageModelV4Content[] {
  const request = requestText(prompt);
  // The stored prompt: its secrets already stand as `{{name}}`.
  const { values } = readPromptValues(request, { placeholders: true });
  const allEvents = toolEvents(prompt);
  // The walk through a paged listing comes last, in one call, and adds no steps.
  const walked = allEvents.find((event) => event.name === 'walk_listing' && !failed(event));
  const events = allEvents.filter((event) => event.name !== 'walk_listing');
  const models = events.filter((event) => event.name === 'page_model' && event.output && typeof event.output === 'object');
  const current = models[models.length - 1]?.output as PageModel | undefined;
  if (!current) return [call('page_model', {})];
  // A list whose items' own pages were read is not walked: those pages are the data.
  const detailsRead = events.some((event) => event.name === 'navigate');
  const steps: ProposalStep[] = [];
  for (const event of events) {
    const input = event.input as { selector?: string; value?: string; key?: string; url?: string; waitForLoad?: boolean };
    if (failed(event)) continue;
    if (event.name === 'fill')
      steps.push({ action: 'fill', selector: input.selector, value: input.value, evidence: 'a form field the prompt gave a value for' });
    if (event.name === 'click')
      steps.push({
        action: 'click',
        selector: input.selector,
        waitForLoad: input.waitForLoad,
        evidence: 'the control the prompt leads through',
      });
    if (event.name === 'select')
      steps.push({ action: 'select', selector: input.selector, value: input.value, evidence: 'the option the prompt names' });
    if (event.name === 'press')
      steps.push({
        action: 'press',
        selector: input.selector,
        key: input.key,
        waitForLoad: input.waitForLoad,
        evidence: 'submits the form',
      });
  }
  const acted = new Set(
    events.filter((event) => ['fill', 'click', 'press', 'select'].includes(event.name)).map((event) => String(event.input.selector)),
  );
  // Once the listing was walked, the proposal follows.
  if (walked) return propose();
  const byName = new Map(values.map((value) => [value.name, value]));
  const quotedValues = values.filter((value) => !value.secret).map((value) => value.value.toLowerCase());
  const placeholder = (name: string) => `{{${name}}}`;

  // A login or search form the prompt gave values for (or a search it asks to submit empty), not yet used.
  for (const form of current.forms) {
    if ([...form.inputs, ...form.submit].some((element) => acted.has(element.selector))) continue;
    // What the request gives the form in its own words ("electricians near the postcode LS6 2AB"):
    // an option of its dropdown the request names, a value written after a field's label. A field
    // so named takes no prompt value.
    const named = form.purpose === 'login' ? [] : namedFormValues(request, form, quotedValues);
    const fills = fillsFor(form, byName).filter((fill) => !named.some((entry) => entry.selector === fill.selector));
    const empty = !fills.length && !named.length && form.purpose === 'search' && wantsEmptySearch(request);
    if (!fills.length && !named.length && !empty) continue;
    // Named by the request alone, every required field gets a value, or the form is left alone.
    const unfilled = form.inputs.some(
      (input) => input.required && !input.filled && !named.some((entry) => entry.selector === input.selector),
    );
    if (!fills.length && named.length && (unfilled || !form.submit[0])) continue;
    const submit = form.submit[0];
    const turn = [
      ...named.map((entry) => call(entry.kind === 'select' ? 'select' : 'fill', { selector: entry.selector, value: entry.value })),
      ...fills.map((fill) => call('fill', { selector: fill.selector, value: placeholder(fill.name) })),
    ];
    // No button: Enter in the field submits the form.
    const field = fills[fills.length - 1]?.selector ?? form.inputs.find((input) => /text|search/.test(input.type))?.selector;
    if (submit) turn.push(call('click', { selector: submit.selector, waitForLoad: true }));
    else if (field) turn.push(call('press', { selector: field, key: 'Enter', waitForLoad: true }));
    else continue;
    turn.push(call('page_model', {}));
    return turn;
  }
  // A link whose text the prompt quotes, or names as a place to go ("go to Garden then Tools").
  const quoted = values.filter((value) => !value.secret).map((value) => value.value.toLowerCase());
  const links = [...current.links, ...current.navigation.flatMap((nav) => nav.links)];
  const link = links.find(
    (candidate) =>
      (quoted.includes(candidate.text.toLowerCase()) || namesPlace(request, candidate.text)) &&
      !acted.has(candidate.selector) &&
      candidate.href !== current.url,
  );
  if (link) return [call('click', { selector: link.selector, waitForLoad: true }), call('page_model', {})];
  // Details of each item: look at the first item's page, to learn its fields.
  if (wantsDetails(request) && !events.some((event) => event.name === 'navigate')) {
    const href = itemLinks(request, current)?.href;
    if (href) return [call('navigate', { url: href }), call('page_model', {})];
  }

  // A tab, an accordion or a dropdown option the prompt names, not chosen yet: one step of its own.
  const control = controlFor(request, current, acted, quoted);
  if (control)
    return [
      control.kind === 'select'
        ? call('select', { selector: control.selector, value: control.value })
        : call('click', { selector: control.selector }),
      call('page_model', {}),
    ];
  // Closed accordions, none named, on a page whose listings do not hold what is asked: every one is
  // opened in one turn (their panels may hold it), once.
  const closed = closedPanels(request, current, acted, events);
  if (closed.length) return [...closed.map((selector) => call('click', { selector })), call('page_model', {})];
  // A listing that goes on past the page: walked to its end in one call.
  if (!detailsRead && current.pagination) return [call('walk_listing', {})];
  return propose();

  function propose(): LanguageModelV4Content[] {
    const seen = models.map((event) => event.output as PageModel);
    const visited = events.some((event) => event.name === 'navigate');
    const walk = walked?.output as { paging?: Paging | null; pages?: PageModel[] } | undefined;
    const paging = walk?.paging ?? undefined;
    const answer = proposeExtraction(request, current as PageModel, seen[0] as PageModel, steps, values, seen, visited, paging);
    // The extraction is verified against the request: its kind of value and its qualifiers.
    const problem = 'steps' in answer ? verifyAgainstRequest(answer, request, seen) : null;
    const verified = problem
      ? { goalNotFound: notFoundMessage(problem.terms, problem, whatPageShows(current as PageModel)).slice(0, 500) }
      : answer;
    return [{ type: 'text', text: JSON.stringify(verified) }];
  }
}

// ---- tabs, accordions and dropdowns -------------------------------------------------------------

/** Words of a control's text that name nothing in particular ("All", "Choose…", "Show"). */
const CONTROL_NOISE = /^(?:all|any|choose|select|pick|show|hide|more|less|open|close|none|other|please|the|a|an|of|and|or|to|by|\W+)$/;

/** Whether the request names `text` (every word of it that means something, singular or plural alike). */
function requestNames(request: string, text: string, quoted: string[]) {
  if (quoted.includes(text.toLowerCase())) return true;
  const asked = stems(request.replace(/\b[a-z][\w+.-]*:\/\/\S+/gi, ' '));
  const own = [...stems(text)].filter((word) => word.length > 1 && !CONTROL_NOISE.test(word));
  return own.length > 0 && own.length <= 4 && own.every((word) => asked.has(word));
}

/**
 * The control the request names and the steps have not chosen yet: an option of a dropdown (its
 * text in the request, "in the kitchen category"), a tab not shown yet, or an accordion not open.
 */
function controlFor(request: string, page: PageModel, acted: Set<string>, quoted: string[]) {
  const controls: PageControl[] = page.controls ?? [];
  for (const control of controls) {
    if (control.kind !== 'select' || acted.has(control.selector)) continue;
    const option = (control.options ?? [])
      .filter((candidate) => candidate.value !== '' && requestNames(request, candidate.text, quoted))
      .sort((a, b) => b.text.length - a.text.length)[0];
    if (option) return { kind: 'select' as const, selector: control.selector, value: option.value };
  }
  for (const control of controls) {
    if (control.kind === 'select' || control.selected || acted.has(control.selector)) continue;
    if (requestNames(request, control.text, quoted)) return { kind: control.kind, selector: control.selector, value: '' };
  }
  return null;
}

/**
 * The closed accordions to open when none is named: the page's listings (if any) do not fit the
 * request, and no accordion was opened yet. Opening a panel only shows what the page holds; what is
 * then read is verified against the request as any listing is.
 */
function closedPanels(request: string, page: PageModel, acted: Set<string>, events: ReturnType<typeof toolEvents>) {
  const accordions = (page.controls ?? []).filter((control) => control.kind === 'accordion');
  if (events.some((event) => event.name === 'click' && accordions.some((control) => control.selector === event.input.selector))) return [];
  if (pageFitsRequest(request, page, acted.size > 0).fitting) return [];
  return accordions
    .filter((control) => !control.selected && !acted.has(control.selector))
    .map((control) => control.selector)
    .slice(0, 12);
}

/** Words of a field's label that name no value ("Your postcode", "Enter a town"). */
const LABEL_NOISE = /^(?:your|my|the|a|an|enter|type|choose|select|search|find|by|for|of|in|or|and|optional|required|\W+)$/;

/**
 * What the request gives a form, in its own words: for a select, its option whose text the request
 * names; for a text field, the value the request writes after the field's label ("postcode LS6
 * 2AB", "reference: AB-12"): quoted, or one to three tokens each holding a digit or written in
 * capitals (a code, a number), never ordinary words.
 */
export function namedFormValues(request: string, form: PageForm, quoted: string[]) {
  const named: { kind: 'select' | 'fill'; selector: string; value: string }[] = [];
  const text = request.replace(/\b[a-z][\w+.-]*:\/\/\S+/gi, ' ');
  for (const input of form.inputs) {
    if (input.type === 'select') {
      const option = (input.options ?? [])
        .filter((candidate) => candidate.value !== '' && requestNames(request, candidate.text, quoted))
        .sort((a, b) => b.text.length - a.text.length)[0];
      if (option) named.push({ kind: 'select', selector: input.selector, value: option.value });
      continue;
    }
    if (!/^(?:text|search|tel|number|email|url)$/.test(input.type)) continue;
    const words = (input.label.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((word) => word.length > 1 && !LABEL_NOISE.test(word));
    if (!words.length || words.length > 3) continue;
    const label = words.join('[\\s-]+');
    const after = new RegExp(`\\b${label}s?\\b\\s*(?:is\\s+|of\\s+|:\\s*|=\\s*)?`, 'i').exec(text);
    if (!after) continue;
    const rest = text.slice(after.index + after[0].length);
    const inQuotes = /^(?:"([^"]+)"|'([^']+)')/.exec(rest);
    // Unquoted: the tokens that each hold a digit or are in capitals, a code or a number, never a word of the sentence.
    const tokens: string[] = [];
    for (const token of rest.split(/\s+/)) {
      const bare = token.replace(/[,.;!?)]+$/, '');
      if (tokens.length >= 3 || !bare || !(/\d/.test(bare) || /^[A-Z]{2,}$/.test(bare)) || !/^[A-Za-z0-9-]+$/.test(bare)) break;
      tokens.push(bare);
      if (bare !== token) break;
    }
    const value = (inQuotes?.[1] ?? inQuotes?.[2] ?? tokens.join(' ')).trim();
    if (value) named.push({ kind: 'fill', selector: input.selector, value });
  }
  return named;
}

/** The inputs of a form the prompt's values fit, by purpose and by name. */
function fillsFor(form: PageForm, values: Map<string, { name: string; secret: boolean }>) {
  const fills: { selector: string; name: string }[] = [];
  // The one who logs in: by user name or by e-mail, whichever the prompt gave and the field takes.
  const user = (preferEmail: boolean) => (preferEmail ? ['email', 'username'] : ['username', 'email']).find((name) => values.has(name));
  for (const input of form.inputs) {
    const hint = `${input.name ?? ''} ${input.label} ${input.type}`.toLowerCase();
    let name: string | undefined;
    if (input.type === 'password') name = values.has('password') ? 'password' : [...values.values()].find((value) => value.secret)?.name;
    else if (/e-?mail/.test(hint)) name = user(true);
    else if (/user|login|account/.test(hint) || (form.purpose === 'login' && /\bname\b|\bid\b/.test(hint))) name = user(false);
    else if (form.purpose === 'login' && /^(text|email)$/.test(input.type)) name = user(input.type === 'email');
    else if (input.type === 'search' || (form.purpose === 'search' && /^(?:text|search)$/.test(input.type)))
      name = values.has('query') ? 'query' : undefined;
    if (name && !fills.some((fill) => fill.name === name)) fills.push({ selector: input.selector, name });
  }
  // A login form needs its password; a search form its query.
  if (form.purpose === 'login' && !fills.some((fill) => fill.name === 'password' || values.get(fill.name)?.secret)) return [];
  return fills;
}

/** The repeated list that fits the request: one naming what it asks for, then the one sharing most words (then the longest). */
function listFor(request: string, page: PageModel) {
  const asked = words(request);
  const noun = requestedNoun(request);
  const score = (list: PageList) =>
    (noun?.words.length && mentions(noun.words, listText(list)) ? 100_000 : 0) + overlap(asked, listText(list)) * 1000 + list.count;
  return [...page.lists].sort((a, b) => score(b) - score(a))[0];
}

/**
 * The links to each item's own page that fit the request: the repeated list's that fits it best
 * (when its items link somewhere), else a table's whose rows each link to one (`<td><a href=…>`),
 * the one naming what is asked first. `count`: the items, `href`: the first one's page.
 */
function itemLinks(request: string, page: PageModel): { linkSelector: string; count: number; href: string } | undefined {
  const list = listFor(request, page);
  const listHref = list?.fields.find((field) => field.attribute === 'href')?.sample;
  if (list?.linkSelector && listHref) return { linkSelector: list.linkSelector, count: list.count, href: listHref };
  const asked = words(request);
  const noun = requestedNoun(request);
  const score = (table: PageTable) =>
    (noun?.words.length && mentions(noun.words, tableText(table)) ? 100_000 : 0) + overlap(asked, tableText(table)) * 1000 + table.rowCount;
  const table = page.tables.filter((candidate) => candidate.linkSelector && candidate.linkSample).sort((a, b) => score(b) - score(a))[0];
  return table?.linkSelector && table.linkSample
    ? { linkSelector: table.linkSelector, count: table.rowCount, href: table.linkSample }
    : undefined;
}

/** What a page shows that could be extracted, named for a reader: `goal_not_found`'s explanation. */
function whatPageShows(page: PageModel) {
  const named = (what: string, heading: string | null | undefined, selector: string) =>
    heading ? `${what} "${heading}"` : `${what} ${selector}`;
  const parts = [
    ...page.tables.map(
      (table) => `${named('a table', table.caption ?? table.heading, table.selector)} (${table.headers.slice(0, 6).join(', ')})`,
    ),
    ...page.lists.map(
      (list) =>
        `${named('a list', list.heading, list.selector)} of ${list.count} items (${list.fields
          .map((field) => field.name)
          .slice(0, 6)
          .join(', ')})`,
    ),
    ...page.forms.map((form) => `a ${form.purpose === 'other' ? '' : `${form.purpose} `}form`),
    ...(page.details.length
      ? [
          `labelled values (${page.details
            .map((detail) => detail.name)
            .slice(0, 6)
            .join(', ')})`,
        ]
      : []),
  ];
  return parts.length ? parts.join('; ') : 'no table, list, form or labelled values';
}

function proposeExtraction(
  request: string,
  page: PageModel,
  first: PageModel,
  steps: ProposalStep[],
  values: { name: string; secret: boolean }[],
  models: PageModel[],
  detailsVisited: boolean,
  paging: Paging | undefined,
): Proposal | GoalNotFound {
  const asked = words(request);
  const noun = requestedNoun(request);
  const specific = Boolean(noun?.words.length);
  const wantsTable = /\btable|rows?\b/i.test(request);
  const score = (text: string, size: number) =>
    (specific && mentions(noun?.words ?? [], text) ? 100_000 : 0) + overlap(asked, text) * 1000 + size;
  const tables = page.tables
    .filter((table) => table.rowCount > 0)
    .map((table: PageTable) => ({ table, score: score(tableText(table), table.rowCount) + (wantsTable ? 500 : 0) }));
  const lists = page.lists.map((list: PageList) => ({ list, score: score(listText(list), list.count) }));
  const bestTable = tables.sort((a, b) => b.score - a.score)[0];
  const bestList = lists.sort((a, b) => b.score - a.score)[0];
  const outputName = noun?.name && /^[a-z][a-z0-9_]*$/.test(noun.name) ? noun.name : 'records';
  const paged = paging ? { paging } : {};
  const pagedOver = paging
    ? `, ${paging.kind === 'links' ? 'paged by links' : paging.kind === 'more' ? 'loaded by a "more" button' : 'loaded by scrolling'}`
    : '';
  const risks: string[] = [];
  const all = [...steps];
  const outputs: OutputDeclaration[] = [];
  const listPage = models.length > 1 ? models[models.length - 2] : undefined;
  const detailList = detailsVisited && listPage ? itemLinks(request, listPage) : undefined;
  const nounNamed = (text: string) => specific && mentions(noun?.words ?? [], text);
  const { fitting, pageNamed, acceptable } = pageFitsRequest(request, page, steps.length > 0);
  const candidates = tables.length + lists.length;
  const asksForHeading = Boolean(noun?.words.some((word) => /^(?:title|heading|headline)s?$/.test(word)));
  if (!detailList && wantsItemPages(request)) {
    // Asked for each item's own page, and none was reached: the listing is not what was asked for.
    return {
      goalNotFound:
        `the request asks for each item’s own page, but ${page.url} links to none from a table or list: it shows ${whatPageShows(page)}`.slice(
          0,
          500,
        ),
    };
  }
  if (detailList?.linkSelector) {
    // The page the list links to, read once per item: its main heading and its labelled values.
    const heading = page.headings.find((candidate) => candidate.level === 1) ?? page.headings[0];
    const fields = [
      ...(heading ? [{ name: 'name', selector: heading.selector }] : []),
      ...page.details.filter((detail) => detail.name !== 'name').map((detail) => ({ name: detail.name, selector: detail.selector })),
    ];
    all.push({
      action: 'extract_fields',
      selector: detailList.linkSelector,
      pagesSelector: detailList.linkSelector,
      fields,
      output: outputName,
      evidence: `each of the ${detailList.count} items links to a page with ${fields.map((field) => field.name).join(', ')}`,
    });
    outputs.push({
      name: outputName,
      description: `one record per item, from its page: ${fields.map((field) => field.name).join(', ')}`,
      kind: 'records',
      fields: fields.map((field) => field.name),
      count: detailList.count,
    });
    risks.push('the fields are those of the first item’s page; pages that differ may miss some');
  } else if (candidates && acceptable && !(asksForHeading && !fitting)) {
    if (bestTable && (!bestList || bestTable.score >= bestList.score)) {
      all.push({
        action: 'extract_table',
        selector: bestTable.table.selector,
        ...paged,
        output: outputName,
        evidence: `a table with columns ${bestTable.table.headers.join(', ')} and ${bestTable.table.rowCount} rows${pagedOver}`,
      });
      outputs.push({
        name: outputName,
        description: `the rows of the table${bestTable.table.caption ? ` "${bestTable.table.caption}"` : ''}`,
        kind: 'records',
        fields: bestTable.table.headers.filter((header) => NAME_PATTERN.test(header)),
        count: bestTable.table.rowCount,
      });
    } else if (bestList) {
      all.push({
        action: 'extract_list',
        selector: bestList.list.itemSelector,
        fields: bestList.list.fields.map((field) => ({
          name: field.name,
          selector: field.selector,
          ...(field.attribute ? { attribute: field.attribute } : {}),
        })),
        ...paged,
        output: outputName,
        evidence: `${bestList.list.count} repeated items with ${bestList.list.fields.map((field) => field.name).join(', ')}${pagedOver}`,
      });
      outputs.push({
        name: outputName,
        description: `the items of the list${bestList.list.heading ? ` "${bestList.list.heading}"` : ''}`,
        kind: 'records',
        fields: bestList.list.fields.map((field) => field.name),
        count: bestList.list.count,
      });
    }
    if (!fitting && specific)
      risks.push(
        `no table or list on the page names ${noun?.words.join(' ')}; the page’s ${pageNamed ? 'name' : 'one listing'} was taken for it`,
      );
  } else if (page.details.length && (!specific || pageNamed || page.details.some((detail) => nounNamed(detail.name)))) {
    // One record: the labelled values of the page.
    const fields = page.details.map((detail) => ({ name: detail.name, selector: detail.selector }));
    // Asked for some of them ("the price and weight"), the record is named for the page's details.
    const name = fields.some((field) => nounNamed(field.name)) ? 'details' : outputName;
    all.push({
      action: 'extract_fields',
      selector: fields[0]?.selector,
      fields,
      output: name,
      evidence: `the page’s labelled values ${fields.map((field) => field.name).join(', ')}`,
    });
    outputs.push({ name, description: 'the labelled values of the page', kind: 'value', fields: fields.map((field) => field.name) });
  } else if (asksForHeading && page.headings[0]) {
    const heading = page.headings.find((candidate) => candidate.level === 1) ?? page.headings[0];
    all.push({ action: 'extract_text', selector: heading.selector, output: outputName, evidence: 'the page’s main heading, as asked' });
    outputs.push({ name: outputName, description: 'the page’s main heading', kind: 'value' });
  } else {
    // Never the heading in place of the data: say what is missing and what the page does show.
    const asked = noun ? noun.words.join(' ') || noun.name : 'what the request asks for';
    return { goalNotFound: `${page.url} shows no ${asked}: it shows ${whatPageShows(page)}`.slice(0, 500) };
  }
  if (page.tables.length + page.lists.length > 1)
    risks.push('the page has several tables or lists; the one whose words best match the prompt was chosen');
  if (paging) risks.push(`the listing was read across every page the analysis reached (${paging.kind}); the run reads it the same way`);
  // A control that changes the page without leaving it (a tab, an accordion, a dropdown): the run
  // waits for the listing it shows before reading it.
  const extraction = all.find((step) => step.action.startsWith('extract_'));
  const shownBy = extraction?.action === 'extract_fields' ? undefined : extraction?.selector;
  // A select a later step submits (a form's field) shows nothing of its own: no wait for it.
  if (shownBy)
    for (const [index, step] of all.entries()) {
      const submitted = all.slice(index + 1).some((later) => later.waitForLoad);
      if ((step.action === 'click' && !step.waitForLoad) || (step.action === 'select' && !submitted)) step.waitForSelector = shownBy;
    }
  const used = new Set(all.flatMap((step) => [...(step.value ?? '').matchAll(/\{\{([^}]+)\}\}/g)].map((match) => match[1])));
  return {
    goal: request.slice(0, 500) || 'extract the page’s data',
    startUrl: first.url,
    steps: [{ action: 'goto', url: first.url, evidence: 'the page the session showed' }, ...all],
    parameters: values
      .filter((value) => used.has(value.name))
      .map((value) => ({ name: value.name, description: `the ${value.name} the prompt gave`, secret: value.secret })),
    outputs,
    risks,
  };
}

function generationTurn(prompt: LanguageModelV4Prompt): LanguageModelV4Content[] {
  // The generation prompt carries the proposal and the defaults as one JSON block.
  const text = requestText(prompt);
  const block = /<proposal>([\s\S]*?)<\/proposal>/.exec(text)?.[1];
  const { proposal, defaults } = JSON.parse(block ?? '{}') as { proposal: Proposal; defaults: Record<string, string> };
  return [{ type: 'text', text: JSON.stringify(sourceFromProposal(proposal, defaults)) }];
}
