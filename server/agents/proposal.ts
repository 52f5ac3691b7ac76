/**
 * What an analysis proposes, and the one deterministic way a proposal becomes a pipeline source.
 *
 * A model answers an analysis with `proposalSchema` (validated; steps name selectors that the page
 * models it was shown contain). `sourceFromProposal` turns it into a source: the `builtin`
 * generator's whole answer, and the draft every other generation model starts from.
 */
import { z } from 'zod';
import { NAME_PATTERN } from '../pipelines/language.ts';

export const stepActions = [
  'goto',
  'fill',
  'click',
  'press',
  'select',
  'extract_table',
  'extract_list',
  'extract_text',
  'extract_fields',
] as const;

/**
 * How a listing goes on past what the page shows now:
 * - `links`: `selector` picks the links to other pages (numbered links, "next", "older stories",
 *   `a[rel=next]`); each page is read, new links found on it are followed, until none are new;
 * - `more`: `selector` is a "Load more"/"Show more" button, clicked until it is gone or adds nothing;
 * - `scroll`: the page loads more as it is scrolled (infinite scroll), until it adds nothing.
 */
export const pagingSchema = z.strictObject({
  kind: z.enum(['links', 'more', 'scroll']),
  selector: z.string().min(1).max(500).optional().describe('links: the pager links; more: the button. Not for scroll.'),
});
export type Paging = z.infer<typeof pagingSchema>;

/**
 * What an output must be, checked against the dry run's result: `records` (a list of records
 * with these fields; at least `count` of them, the number the analysis saw across every page it
 * visited) or `value` (a single value).
 */
export const outputDeclarationSchema = z.strictObject({
  name: z.string().regex(NAME_PATTERN),
  description: z.string().max(300),
  kind: z.enum(['records', 'value']).optional().describe('records: a list of records with named fields; value: one value.'),
  fields: z.array(z.string().regex(NAME_PATTERN)).max(40).optional().describe('records: the field every record has.'),
  count: z.number().int().min(0).max(1_000_000).optional().describe('records: how many the analysis saw across every page it visited.'),
});
export type OutputDeclaration = z.infer<typeof outputDeclarationSchema>;

const stepSchema = z.strictObject({
  action: z.enum(stepActions).describe('What the step does.'),
  selector: z.string().min(1).max(500).optional().describe('The element, as the page model names it (not for goto).'),
  url: z.string().max(2000).optional().describe('goto: the address.'),
  value: z.string().max(2000).optional().describe('fill/select: the value; "{{name}}" for a parameter.'),
  key: z.string().max(40).optional().describe('press: the key, e.g. Enter.'),
  waitForLoad: z.boolean().optional().describe('click/press: the action loads a new page.'),
  waitForSelector: z
    .string()
    .min(1)
    .max(500)
    .optional()
    .describe('click/select that changes the page without loading one (a tab, an accordion, a dropdown): the element it shows.'),
  fields: z
    .array(
      z.strictObject({
        name: z.string().regex(NAME_PATTERN),
        selector: z.string().min(1).max(300),
        attribute: z.string().max(60).optional(),
      }),
    )
    .max(20)
    .optional()
    .describe('extract_list: the fields of each item, by a selector inside the item; extract_fields: the fields of the page, one record.'),
  pagesSelector: z
    .string()
    .max(500)
    .optional()
    .describe(
      'extract_fields: the links to the pages to read, one record each. (extract_table/extract_list: an older way to say paging {kind: "links"}.)',
    ),
  paging: pagingSchema
    .optional()
    .describe(
      'extract_table/extract_list: how the listing goes on past what the page shows now; every page is read and the records joined.',
    ),
  output: z.string().regex(NAME_PATTERN).optional().describe('extract_*: the name of the pipeline output it feeds.'),
  evidence: z.string().max(500).describe('What on the page shows this step is right.'),
});

export const proposalSchema = z.strictObject({
  goal: z.string().min(1).max(500),
  startUrl: z.string().min(1).max(2000),
  steps: z.array(stepSchema).min(1).max(40),
  parameters: z
    .array(
      z.strictObject({
        name: z.string().regex(NAME_PATTERN),
        description: z.string().max(300),
        secret: z.boolean(),
      }),
    )
    .max(20),
  outputs: z.array(outputDeclarationSchema).max(20),
  risks: z.array(z.string().max(300)).max(20),
});

export type Proposal = z.infer<typeof proposalSchema>;
export type ProposalStep = Proposal['steps'][number];

/** Proposal problems beyond the schema: each a sentence a model can act on. */
export function checkProposal(proposal: Proposal, knownSelectors: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  const parameters = new Set(proposal.parameters.map((parameter) => parameter.name));
  for (const [index, step] of proposal.steps.entries()) {
    const where = `step ${index + 1} (${step.action})`;
    if (step.action !== 'goto' && !step.selector) problems.push(`${where} needs a selector`);
    if (step.action === 'goto' && !step.url) problems.push(`${where} needs a url`);
    if ((step.action === 'fill' || step.action === 'select') && step.value === undefined) problems.push(`${where} needs a value`);
    if ((step.action === 'extract_list' || step.action === 'extract_fields') && !step.fields?.length)
      problems.push(`${where} needs fields`);
    for (const field of step.action === 'extract_fields' ? (step.fields ?? []) : []) {
      if (!knownSelectors.has(field.selector)) {
        problems.push(
          `${where}: the field selector ${JSON.stringify(field.selector)} is not in any page model you were shown; use one from page_model`,
        );
      }
    }
    for (const selector of [step.selector, step.pagesSelector, step.paging?.selector, step.waitForSelector]) {
      if (selector && !knownSelectors.has(selector)) {
        problems.push(
          `${where}: the selector ${JSON.stringify(selector)} is not in any page model you were shown; use one from page_model`,
        );
      }
    }
    for (const [, name] of (step.value ?? '').matchAll(/\{\{([^}]+)\}\}/g)) {
      if (!parameters.has(name as string)) problems.push(`${where} uses {{${name}}}, which is not among the parameters`);
    }
  }
  if (!proposal.steps.some((step) => step.action.startsWith('extract_'))) problems.push('no step extracts anything');
  return problems;
}

/** The time limit of an extract node that reads every page of a listing. */
const PAGED_TIMEOUT_MS = 180_000;

type Node = {
  type: string;
  inputs?: Record<string, unknown>;
  timeoutMs?: number;
  body?: { nodes: Record<string, Node>; outputs?: Record<string, unknown> };
};

/**
 * The pipeline source for a proposal: a page, a goto, then one node per step, each taking the page
 * the previous one handed on. A value `{{name}}` becomes the parameter `name`; non-secret
 * parameters default to the value the prompt gave.
 */
export function sourceFromProposal(proposal: Proposal, defaults: Record<string, string> = {}): Record<string, unknown> {
  const nodes: Record<string, Node> = { browser: { type: 'browser.page' } };
  let page = 'browser.page';
  const outputs: Record<string, { $ref: string }> = {};
  const used = new Set<string>();
  const name = (base: string) => {
    let candidate = base;
    for (let n = 2; nodes[candidate]; n++) candidate = `${base}${n}`;
    return candidate;
  };
  const value = (text: string) => {
    const whole = /^\{\{([A-Za-z_][A-Za-z0-9_-]{0,63})\}\}$/.exec(text);
    if (whole) {
      used.add(whole[1] as string);
      return { $param: whole[1] };
    }
    return text;
  };
  const steps =
    proposal.steps[0]?.action === 'goto'
      ? proposal.steps
      : [{ action: 'goto' as const, url: proposal.startUrl, evidence: '' }, ...proposal.steps];
  for (const [index, step] of steps.entries()) {
    const ref = { $ref: page };
    const waitFor = step.waitForLoad ? { waitFor: 'load' } : {};
    const outputName = step.output ?? `result${index}`;
    switch (step.action) {
      case 'goto': {
        const key = name('open');
        nodes[key] = { type: 'page.goto', inputs: { page: ref, url: value(step.url ?? proposal.startUrl) } };
        page = `${key}.page`;
        break;
      }
      case 'fill':
      case 'select': {
        const key = name(step.action);
        nodes[key] = { type: `page.${step.action}`, inputs: { page: ref, selector: step.selector, value: value(step.value ?? '') } };
        page = `${key}.page`;
        if (step.action === 'select' && step.waitForSelector) {
          // A dropdown whose change event fills a list: wait for the list before reading it.
          const wait = name('shown');
          nodes[wait] = { type: 'page.wait', inputs: { page: { $ref: page }, selector: step.waitForSelector, state: 'visible' } };
          page = `${wait}.page`;
        }
        break;
      }
      case 'click': {
        const key = name('click');
        const shown = !step.waitForLoad && step.waitForSelector ? { waitForSelector: step.waitForSelector } : {};
        nodes[key] = { type: 'page.click', inputs: { page: ref, selector: step.selector, ...waitFor, ...shown } };
        page = `${key}.page`;
        break;
      }
      case 'press': {
        const key = name('press');
        nodes[key] = { type: 'page.press', inputs: { page: ref, selector: step.selector, key: step.key ?? 'Enter', ...waitFor } };
        page = `${key}.page`;
        break;
      }
      case 'extract_text': {
        const key = name(outputName);
        nodes[key] = { type: 'extract.text', inputs: { page: ref, selector: step.selector } };
        outputs[outputName] = { $ref: `${key}.text` };
        page = `${key}.page`;
        break;
      }
      case 'extract_fields': {
        // One record of the page's fields; with `pagesSelector`, one per page those links lead to.
        const fieldNodes = (pageRef: { $ref: string }, prefix: string) => {
          const made: Record<string, Node> = {};
          const record: Record<string, { $ref: string }> = {};
          let current = pageRef;
          for (const field of step.fields ?? []) {
            const key = `${prefix}f_${field.name}`;
            made[key] = field.attribute
              ? {
                  type: 'extract.attribute',
                  inputs: { page: current, selector: field.selector, attribute: field.attribute, resolveUrl: true },
                }
              : { type: 'extract.text', inputs: { page: current, selector: field.selector } };
            record[field.name] = { $ref: `${key}.${field.attribute ? 'value' : 'text'}` };
            current = { $ref: `${key}.page` };
          }
          made[`${prefix}fields`] = { type: 'json.object', inputs: record };
          return { made, last: current };
        };
        if (!step.pagesSelector) {
          const prefix = `${name(outputName)}_`;
          const { made, last } = fieldNodes(ref, prefix);
          Object.assign(nodes, made);
          outputs[outputName] = { $ref: `${prefix}fields.record` };
          page = last.$ref;
          break;
        }
        const links = name(`${outputName}_links`);
        const each = name(outputName);
        nodes[links] = {
          type: 'extract.attribute',
          inputs: { page: ref, selector: step.pagesSelector, attribute: 'href', resolveUrl: true },
        };
        // Names are unique across the pipeline, sub-graphs included: the body's carry the loop's.
        const { made } = fieldNodes({ $ref: `${each}_visit.page` }, `${each}_`);
        nodes[each] = {
          type: 'flow.forEach',
          inputs: { items: { $ref: `${links}.values` }, page: { $ref: `${links}.page` } },
          body: {
            nodes: {
              [`${each}_visit`]: { type: 'page.goto', inputs: { page: { $ref: `${each}.page` }, url: { $ref: `${each}.item` } } },
              ...made,
            },
            outputs: { record: { $ref: `${each}_fields.record` } },
          },
        };
        outputs[outputName] = { $ref: `${each}.record` };
        page = `${each}.page`;
        break;
      }
      case 'extract_table':
      case 'extract_list': {
        // A paged listing is one node reading every page (its `pages` input); `pagesSelector` is the
        // older way to say paging by links.
        const paging: Paging | undefined =
          step.paging ?? (step.pagesSelector ? { kind: 'links', selector: step.pagesSelector } : undefined);
        const pages =
          paging?.kind === 'scroll'
            ? { scroll: true }
            : paging?.selector
              ? paging.kind === 'more'
                ? { more: paging.selector }
                : { links: paging.selector }
              : undefined;
        const key = name(outputName);
        const inputs: Record<string, unknown> =
          step.action === 'extract_table'
            ? { page: ref, selector: step.selector }
            : {
                page: ref,
                selector: step.selector,
                fields: Object.fromEntries(
                  (step.fields ?? []).map((field) => [
                    field.name,
                    field.attribute ? { selector: field.selector, attribute: field.attribute } : field.selector,
                  ]),
                ),
              };
        nodes[key] = {
          type: step.action === 'extract_table' ? 'extract.table' : 'extract.list',
          inputs: pages ? { ...inputs, pages } : inputs,
          // Every page in one node: time for a listing of many pages.
          ...(pages ? { timeoutMs: PAGED_TIMEOUT_MS } : {}),
        };
        outputs[outputName] = { $ref: `${key}.records` };
        page = `${key}.page`;
        break;
      }
    }
  }
  const parameters = Object.fromEntries(
    proposal.parameters
      .filter((parameter) => used.has(parameter.name))
      .map((parameter) => [
        parameter.name,
        {
          refType: 'string',
          description: parameter.description,
          ...(parameter.secret ? { secret: true } : {}),
          ...(!parameter.secret && defaults[parameter.name] !== undefined ? { default: defaults[parameter.name] } : {}),
        },
      ]),
  );
  return { ...(Object.keys(parameters).length ? { parameters } : {}), nodes, outputs };
}

/**
 * The other answer an analysis may give: the pages do not hold what the request asks for. The job
 * ends with `goal_not_found`, its message naming the lists, tables and forms the pages showed.
 */
export const goalNotFoundSchema = z.strictObject({
  goalNotFound: z.string().min(1).max(500).describe('Why the pages do not hold what the request asks for.'),
});
export type GoalNotFound = z.infer<typeof goalNotFoundSchema>;
