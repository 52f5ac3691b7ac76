import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, registerUser } from '../support/accounts.ts';
import {
  hours,
  menu,
  offices,
  plans,
  plants,
  quotes,
  seeds,
  startInteractionSite,
  stock,
  trails,
  vets,
} from '../support/interactionPages.ts';
import { createPipeline, settledJob, settledRun } from '../support/pipelines.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * A user asks `builtin` for data behind an interaction (a pager of more pages than an analysis has
 * steps, a "more" button, a dropdown, a tab, an accordion) or in a shape other than a table
 * (definition lists, cards), accepts the analysis and the generation, and runs the version: the
 * run's records are what the page serves. Asked for what the page does not hold, the analysis
 * ends loud and names the words it could not find.
 */

let stack: TestStack;
let site: Awaited<ReturnType<typeof startInteractionSite>>;
let token: string;
let slug: string;
let sessionId: string;

beforeAll(async () => {
  site = await startInteractionSite();
  stack = await startTestStack({}, { browserHost: true });
  const owner = await registerUser(stack);
  token = owner.token;
  slug = (await createProject(stack, token)).slug;
  sessionId = (await stack.http.put(`/${slug}/api/sessions`, { name: 'reader' }, { token })).body.id;
}, 120_000);
afterAll(async () => {
  await stack?.close();
  await site?.close();
});

const base = (pipelineId: string) => `/${slug}/api/pipelines/${pipelineId}`;

/** The text values of records, without link addresses, each record's sorted (stored results do not keep key order). */
const shown = (records: Record<string, unknown>[]) =>
  records.map((record) =>
    Object.values(record)
      .filter((value) => typeof value === 'string' && !/^https?:\/\//.test(value))
      .sort(),
  );
const served = (rows: (string[] | Record<string, string>)[]) => rows.map((row) => Object.values(row).sort());

async function analyse(prompt: string) {
  const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
  const started = await stack.http.put(`${base(pipelineId)}/analysis`, { session: sessionId, model: 'builtin', prompt }, { token });
  expect(started.status, started.text).toBe(200);
  const analysisUrl = `/${slug}/api/analysis/${started.body.id}`;
  return { pipelineId, analysisUrl, analysis: await settledJob(stack, analysisUrl, { token }, 180_000) };
}

/** Analysis → accept → generation → accept (never forced) → a run: the analysis's steps and the run's only output. */
async function analyseGenerateAndRun(prompt: string) {
  const { pipelineId, analysisUrl, analysis } = await analyse(prompt);
  expect(analysis.error, JSON.stringify(analysis.error)).toBeNull();
  const generationStart = await stack.http.post(`${analysisUrl}/accept`, { model: 'builtin' }, { token });
  expect(generationStart.status, generationStart.text).toBe(200);
  const generationUrl = `/${slug}/api/generation/${generationStart.body.id}`;
  const generation = await settledJob(stack, generationUrl, { token }, 180_000);
  expect(generation.dryRun?.status, JSON.stringify(generation.dryRun ?? generation.error)).toBe('succeeded');
  const accepted = await stack.http.post(`${generationUrl}/accept`, undefined, { token });
  expect(accepted.status, accepted.text).toBe(200);
  const run = await stack.http.post(`${base(pipelineId)}/start`, { session: sessionId }, { token });
  expect(run.status, run.text).toBe(200);
  const ended = await settledRun(stack, `${base(pipelineId)}/${run.body.id}`, { token }, 180_000);
  expect(ended.status.pipeline, JSON.stringify(ended.error)).toBe('succeeded');
  const outputs = Object.values(ended.result as Record<string, Record<string, unknown>[]>);
  expect(outputs).toHaveLength(1);
  // The analysis's model turns: a walk of many pages is one of them.
  const turns = (analysis.messages as { role: string }[]).filter((message) => message.role === 'assistant').length;
  return {
    steps: analysis.output.steps as Record<string, unknown>[],
    source: generation.output,
    records: outputs[0] as Record<string, unknown>[],
    turns,
  };
}

describe('data behind an interaction becomes a version that reads it', () => {
  it('paging by a link, 26 pages: one walk, not one step per page; the run reads all 52 trails', async () => {
    const { steps, records, turns } = await analyseGenerateAndRun(`List every walking trail on ${site.url}/trails`);
    expect(steps.at(-1)).toMatchObject({ action: 'extract_list', paging: { kind: 'links' } });
    expect(turns).toBeLessThan(6);
    expect(shown(records)).toEqual(served(trails));
  }, 400_000);

  it('paging by a button ("View 4 more", removed at the end): all 18 seed packets', async () => {
    const { steps, records } = await analyseGenerateAndRun(`${site.url}/seeds get all the seed packets with prices`);
    expect(steps.at(-1)).toMatchObject({ action: 'extract_list', paging: { kind: 'more' } });
    expect(shown(records)).toEqual(served(seeds));
  }, 400_000);

  it('"Show more" until it is hidden: all 11 quotes', async () => {
    const { steps, records } = await analyseGenerateAndRun(`Collect all the quotes from ${site.url}/quotes`);
    expect(steps.at(-1)).toMatchObject({ action: 'extract_list', paging: { kind: 'more' } });
    expect(shown(records)).toEqual(served(quotes));
  }, 400_000);

  it('a dropdown whose change event fills the list: the garden products, chosen by the words of the request', async () => {
    const { steps, source, records } = await analyseGenerateAndRun(`list the products in the garden category on ${site.url}/stock`);
    expect(steps).toContainEqual(expect.objectContaining({ action: 'select', selector: '#category', value: 'garden' }));
    expect(Object.values(source.nodes as Record<string, { type: string }>).map((node) => node.type)).toEqual(
      expect.arrayContaining(['page.select', 'page.wait', 'extract.list']),
    );
    expect(shown(records)).toEqual(served(stock.garden as string[][]));
  }, 400_000);

  it('a tab: the yearly plans, from the panel the tab shows', async () => {
    const { steps, records } = await analyseGenerateAndRun(`get the yearly plans from ${site.url}/plans`);
    expect(steps).toContainEqual(expect.objectContaining({ action: 'click', waitForSelector: '#yearly-plans' }));
    expect(records).toEqual(plans.yearly.map(([plan, price]) => ({ Plan: plan, Price: price })));
  }, 400_000);

  it('an accordion: the opening hours, from the closed <details> the request names', async () => {
    const { steps, records } = await analyseGenerateAndRun(`extract the opening hours from ${site.url}/help`);
    expect(steps).toContainEqual(expect.objectContaining({ action: 'click', waitForSelector: '#hours' }));
    expect(records).toEqual(hours.map(([day, opens, closes]) => ({ Day: day, Opens: opens, Closes: closes })));
  }, 400_000);

  it('accordions none of which the request names: every closed one opened, the groups read as one list', async () => {
    const { steps, records } = await analyseGenerateAndRun(`list every dish on the menu with its price at ${site.url}/menu`);
    expect(steps.filter((step) => step.action === 'click')).toHaveLength(menu.length);
    expect(shown(records)).toEqual(served(menu.flatMap(([, dishes]) => dishes)));
  }, 400_000);

  it('a form filled from the request’s own words (an option it names, a postcode after its label), then its results', async () => {
    const { steps, records } = await analyseGenerateAndRun(
      `find vets for horses near the postcode YO1 7HH on ${site.url}/vets and list their names, phone numbers and how far away they are`,
    );
    expect(steps).toContainEqual(expect.objectContaining({ action: 'fill', selector: '#postcode', value: 'YO1 7HH' }));
    expect(steps).toContainEqual(expect.objectContaining({ action: 'select', selector: '#animal', value: 'horses' }));
    expect(shown(records)).toEqual(served(vets.horses as string[][]));
  }, 400_000);

  it('a list of definition lists: one record per office, fields named by their terms, narrowed to what was asked', async () => {
    const { records } = await analyseGenerateAndRun(`list the phone numbers of the offices on ${site.url}/offices`);
    // The phone numbers asked, with what names each office (its first field); not the opening time.
    expect(records).toEqual(offices.map(({ office, phone }) => ({ office, phone })));
  }, 400_000);

  it('cards whose names are their titles: "names" finds them, and only they are kept', async () => {
    const { records } = await analyseGenerateAndRun(`list the names of the plants at ${site.url}/plants`);
    expect(shown(records)).toEqual(plants.map(([name]) => [name]));
  }, 400_000);

  it('the values named for each record: kept by their labels, the others left out', async () => {
    const { records } = await analyseGenerateAndRun(`${site.url}/offices every office - name, phone`);
    expect(records).toEqual(offices.map(({ office, phone }) => ({ office, phone })));
  }, 400_000);
});

describe('data the page does not hold ends loud, naming the words the user wrote', () => {
  it('a value asked of each record that no field holds: goal_not_found names it, as written', async () => {
    const { analysis, analysisUrl } = await analyse(`${site.url}/offices every office: name, phone and fax number`);
    expect(analysis.error?.code).toBe('goal_not_found');
    expect(analysis.error.message).toMatch(/^could not extract all that was asked: no field of what it extracts holds 'fax number'/);
    const accept = await stack.http.post(`${analysisUrl}/accept`, { model: 'builtin' }, { token });
    expect(accept.status).toBe(400);
  }, 400_000);

  it('e-mail addresses asked of a page of phones: goal_not_found names the e-mail address and the manager', async () => {
    const { analysis, analysisUrl } = await analyse(`get each office manager's e-mail address from ${site.url}/offices`);
    expect(analysis.error?.code).toBe('goal_not_found');
    expect(analysis.error.message).toMatch(/'office manager e-mail address'/);
    expect(analysis.error.message).toMatch(/no e-mail address is there for 'e-mail address'/);
    expect(analysis.error.message).toMatch(/'office manager'/);
    const accept = await stack.http.post(`${analysisUrl}/accept`, { model: 'builtin' }, { token });
    expect(accept.status).toBe(400);
  }, 400_000);

  it('a qualifier the page lacks: the interest rate of a savings account on a page of exchange rates', async () => {
    const { analysis, analysisUrl } = await analyse(`get the interest rate of every savings account from ${site.url}/rates`);
    expect(analysis.error?.code).toBe('goal_not_found');
    expect(analysis.error.message).toMatch(
      /^found no 'interest rate' of a 'savings account' on the page: nothing near what it shows says 'interest' or 'savings account'/,
    );
    expect(analysis.error.message).toMatch(/Exchange rates/);
    const accept = await stack.http.post(`${analysisUrl}/accept`, { model: 'builtin' }, { token });
    expect(accept.status).toBe(400);
  }, 400_000);
});
