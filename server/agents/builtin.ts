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
 * Generation: `sourceFromProposal` of the analysis.
 */
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4Content, LanguageModelV4Prompt } from '@ai-sdk/provider';
import type { PageForm, PageList, PageModel, PageTable } from './pageModel.ts';
import { failed, requestText, type ToolEvent, tokenUsage, toolCaller, toolEvents } from './promptReading.ts';
import { readPromptValues } from './promptValues.ts';
import type { Paging, Proposal, ProposalStep } from './proposal.ts';
import { sourceFromProposal } from './proposal.ts';

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
  const { values } = readPromptValues(request);
  const allEvents = toolEvents(prompt);
  // The walk through a paged listing comes last and adds no steps: the rest reads the page before it.
  const events = allEvents.filter((event) => !isWalk(event));
  const models = events.filter((event) => event.name === 'page_model' && event.output && typeof event.output === 'object');
  const current = models[models.length - 1]?.output as PageModel | undefined;
  if (!current) return [call('page_model', {})];
  // A list whose items' own pages were read is not walked: those pages are the data.
  const detailsRead = events.some((event) => event.name === 'navigate');
  const walk = detailsRead
    ? { started: false, calls: [], paging: undefined }
    : walkListing(current, allEvents, toolCaller(prompt, WALK_PREFIX));
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
    events.filter((event) => ['fill', 'click', 'press'].includes(event.name)).map((event) => String(event.input.selector)),
  );
  // Once the walk has begun, it goes on to its end and then the proposal follows.
  if (walk.started) return walk.calls.length ? walk.calls : propose();
  const byName = new Map(values.map((value) => [value.name, value]));
  const placeholder = (name: string) => `{{${name}}}`;

  // A login or search form the prompt gave values for, not yet used.
  for (const form of current.forms) {
    if (form.inputs.some((input) => acted.has(input.selector))) continue;
    const fills = fillsFor(form, byName);
    if (!fills.length) continue;
    const submit = form.submit[0];
    const turn = fills.map((fill) => call('fill', { selector: fill.selector, value: placeholder(fill.name) }));
    if (submit) turn.push(call('click', { selector: submit.selector, waitForLoad: true }));
    else turn.push(call('press', { selector: fills[fills.length - 1]?.selector, key: 'Enter', waitForLoad: true }));
    turn.push(call('page_model', {}));
    return turn;
  }
  // A link whose text the prompt quotes.
  const quoted = values.filter((value) => !value.secret).map((value) => value.value.toLowerCase());
  const links = [...current.links, ...current.navigation.flatMap((nav) => nav.links)];
  const link = links.find((candidate) => quoted.includes(candidate.text.toLowerCase()) && !acted.has(candidate.selector));
  if (link) return [call('click', { selector: link.selector, waitForLoad: true }), call('page_model', {})];
  // Details of each item: look at the first item's page, to learn its fields.
  if (wantsDetails(request) && !events.some((event) => event.name === 'navigate')) {
    const list = listFor(request, current);
    const href = list?.fields.find((field) => field.attribute === 'href')?.sample;
    if (list?.linkSelector && href) return [call('navigate', { url: href }), call('page_model', {})];
  }

  if (walk.calls.length) return walk.calls;
  return propose();

  function propose(): LanguageModelV4Content[] {
    const seen = models.map((event) => event.output as PageModel);
    const visited = events.some((event) => event.name === 'navigate');
    const paging = walk.paging;
    return [
      {
        type: 'text',
        text: JSON.stringify(proposeExtraction(request, current as PageModel, seen[0] as PageModel, steps, values, seen, visited, paging)),
      },
    ];
  }
}

// ---- the walk through a paged listing ---------------------------------------------------------

/** Tool calls of the walk carry this id prefix, so later turns tell them from the steps taken. */
const WALK_PREFIX = 'builtin-walk';
const isWalk = (event: ToolEvent) => event.id.startsWith(`${WALK_PREFIX}-`);
/** Pages (or loads, or scrolls) the walk reads at most: the analysis has a step bound. */
const MAX_WALK = 12;

/** The item count of each table and list of `base`, as `page` shows them. */
function listingCounts(base: PageModel, page: PageModel) {
  return [
    ...base.tables.map((table) => page.tables.find((other) => other.selector === table.selector)?.rowCount ?? 0),
    ...base.lists.map((list) => page.lists.find((other) => other.itemSelector === list.itemSelector)?.count ?? 0),
  ];
}
const grewFrom = (base: PageModel, before: PageModel, after: PageModel) => {
  const was = listingCounts(base, before);
  return listingCounts(base, after).some((count, index) => count > (was[index] ?? 0));
};

/**
 * Walks the listing of `base` (the page the steps lead to) the way its pager says, one turn at a
 * time, so the page models the analysis saw hold every page: the pager's next page (the "next"
 * link, else the first numbered page not read yet) until there is none; the "more" button until it
 * is gone or adds nothing; the bottom of the page until scrolling adds nothing. `calls`: the next
 * turn (none when done); `paging`: what the extraction step says, once the walk showed it works.
 */
function walkListing(base: PageModel, events: ToolEvent[], call: ReturnType<typeof toolCaller>) {
  const walked = events.filter(isWalk);
  const seen = walked
    .filter((event) => event.name === 'page_model' && event.output && typeof event.output === 'object')
    .map((event) => event.output as PageModel);
  const latest = seen[seen.length - 1] ?? base;
  const pagination = base.pagination;
  const lastAction = [...walked].reverse().find((event) => event.name !== 'page_model');
  const started = walked.length > 0;
  const done = (paging?: Paging) => ({ started, calls: [] as LanguageModelV4Content[], paging });
  if (!pagination) return done();
  const anyGrowth = seen.some((page, index) => grewFrom(base, seen[index - 1] ?? base, page));
  if (seen.length >= MAX_WALK || (lastAction && failed(lastAction)))
    return done((pagination.kind === 'links' ? seen.length > 0 : anyGrowth) ? paging() : undefined);
  function paging(): Paging {
    return pagination?.kind === 'scroll' ? { kind: 'scroll' } : { kind: pagination?.kind ?? 'links', selector: pagination?.selector };
  }
  if (pagination.kind === 'links') {
    if (!pagination.selector) return done();
    // Pages are known by address and by the number the pager shows as current; a start page that
    // shows neither as such is page 1 (the "1" link on later pages leads back to it).
    const read = [base, ...seen];
    const addresses = new Set(read.map((page) => page.url.split('#')[0]));
    const numbers = new Set(read.map((page) => page.pagination?.current).filter((number): number is string => Boolean(number)));
    const startNumber = base.pagination?.pages.find((link) => addresses.has(link.href.split('#')[0]))?.text;
    if (!base.pagination?.current && !startNumber) numbers.add('1');
    const unread = (link: { href: string; text: string } | null | undefined) =>
      Boolean(
        link && /^https?:/.test(link.href) && !addresses.has(link.href.split('#')[0]) && !numbers.has(link.text.replace(/^page /i, '')),
      );
    const onwards = latest.pagination?.kind === 'links' ? latest.pagination : null;
    const next = onwards && (unread(onwards.next) ? onwards.next : onwards.pages.find(unread));
    if (!next) return done(read.length > 1 ? paging() : undefined);
    return { started: true, calls: [call('navigate', { url: next.href }), call('page_model', {})], paging: undefined };
  }
  // more and scroll: go on while the last action made the listing grow; page only if one did.
  const grew = seen.length === 0 || grewFrom(base, seen[seen.length - 2] ?? base, latest);
  if (!grew) return done(anyGrowth ? paging() : undefined);
  if (pagination.kind === 'more') {
    const button = latest.pagination?.kind === 'more' ? latest.pagination.selector : undefined;
    if (!button) return done(anyGrowth ? paging() : undefined);
    return { started: true, calls: [call('click', { selector: button }), call('page_model', {})], paging: undefined };
  }
  return { started: true, calls: [call('scroll', {}), call('page_model', {})], paging: undefined };
}

/** The inputs of a form the prompt's values fit, by purpose and by name. */
function fillsFor(form: PageForm, values: Map<string, { name: string; secret: boolean }>) {
  const fills: { selector: string; name: string }[] = [];
  for (const input of form.inputs) {
    const hint = `${input.name ?? ''} ${input.label} ${input.type}`.toLowerCase();
    let name: string | undefined;
    if (input.type === 'password') name = values.has('password') ? 'password' : [...values.values()].find((value) => value.secret)?.name;
    else if (/e-?mail/.test(hint) && values.has('email')) name = 'email';
    else if (/user|login|account/.test(hint)) name = values.has('username') ? 'username' : values.has('email') ? 'email' : undefined;
    else if (form.purpose === 'login' && input.type === 'email') name = values.has('email') ? 'email' : undefined;
    else if (form.purpose === 'search' || input.type === 'search') name = values.has('query') ? 'query' : undefined;
    if (name) fills.push({ selector: input.selector, name });
  }
  // A login form needs its password; a search form its query.
  if (form.purpose === 'login' && !fills.some((fill) => fill.name === 'password' || values.get(fill.name)?.secret)) return [];
  return fills;
}

const wantsDetails = (request: string) => /\bdetails?\b|\beach\b[^.]*\bpages?\b/i.test(request);

/** The repeated list whose words best match the request (then the longest). */
function listFor(request: string, page: PageModel) {
  const asked = words(request);
  return [...page.lists].sort(
    (a, b) =>
      overlap(asked, `${b.selector} ${b.fields.map((f) => f.name).join(' ')}`) * 1000 +
      b.count -
      (overlap(asked, `${a.selector} ${a.fields.map((f) => f.name).join(' ')}`) * 1000 + a.count),
  )[0];
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
): Proposal {
  const asked = words(request);
  const wantsTable = /\btable|rows?\b/i.test(request);
  const score = (text: string, size: number) => overlap(asked, text) * 1000 + size;
  const tables = page.tables.map((table: PageTable) => ({
    table,
    score: score(`${table.caption ?? ''} ${table.headers.join(' ')} ${table.selector}`, table.rowCount) + (wantsTable ? 500 : 0),
  }));
  const lists = page.lists.map((list: PageList) => ({
    list,
    score: score(`${list.selector} ${list.fields.map((f) => f.name).join(' ')}`, list.count),
  }));
  const bestTable = tables.sort((a, b) => b.score - a.score)[0];
  const bestList = lists.sort((a, b) => b.score - a.score)[0];
  const heading = page.headings[0];
  const outputName = (() => {
    const noun = request
      .toLowerCase()
      .match(/\b(?:extract|list|get|collect|read|scrape|return)\s+(?:(?:all|every|the|each)\s+)*(?:of\s+)?(?:the\s+)?([a-z]+)/);
    const candidate = noun?.[1] && !['from', 'on', 'in', 'items', 'data'].includes(noun[1]) ? noun[1] : 'records';
    return candidate.replace(/[^a-z0-9_]/g, '') || 'records';
  })();
  const paged = paging ? { paging } : {};
  const pagedOver = paging
    ? `, ${paging.kind === 'links' ? 'paged by links' : paging.kind === 'more' ? 'loaded by a "more" button' : 'loaded by scrolling'}`
    : '';
  const risks: string[] = [];
  const all = [...steps];
  const listPage = models.length > 1 ? models[models.length - 2] : undefined;
  const detailList = detailsVisited && listPage ? listFor(request, listPage) : undefined;
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
    risks.push('the fields are those of the first item’s page; pages that differ may miss some');
  } else if (bestTable && (!bestList || bestTable.score >= bestList.score)) {
    all.push({
      action: 'extract_table',
      selector: bestTable.table.selector,
      ...paged,
      output: outputName,
      evidence: `a table with columns ${bestTable.table.headers.join(', ')} and ${bestTable.table.rowCount} rows${pagedOver}`,
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
  } else if (heading) {
    all.push({ action: 'extract_text', selector: heading.selector, output: 'heading', evidence: 'the page’s main heading' });
    risks.push('no table or repeated list was found; only the heading is extracted');
  }
  if (page.tables.length + page.lists.length > 1)
    risks.push('the page has several tables or lists; the one whose words best match the prompt was chosen');
  if (paging) risks.push(`the listing was read across every page the analysis reached (${paging.kind}); the run reads it the same way`);
  const used = new Set(all.flatMap((step) => [...(step.value ?? '').matchAll(/\{\{([^}]+)\}\}/g)].map((match) => match[1])));
  return {
    goal: request.replace(/"\{\{[^}]+\}\}"/g, (match) => match).slice(0, 500) || 'extract the page’s data',
    startUrl: first.url,
    steps: [{ action: 'goto', url: first.url, evidence: 'the page the session showed' }, ...all],
    parameters: values
      .filter((value) => used.has(value.name))
      .map((value) => ({ name: value.name, description: `the ${value.name} the prompt gave`, secret: value.secret })),
    outputs: all.filter((step) => step.output).map((step) => ({ name: step.output as string, description: step.evidence })),
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
