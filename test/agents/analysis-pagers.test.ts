import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PageModel } from '../../server/agents/page/pageModel.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import {
  pagerArchive,
  pagerCards,
  pagerEvents,
  pagerFeed,
  pagerJournal,
  pagerOrders,
  pagerPosts,
  pagerProducts,
  pagerShelf,
  pagerStories,
  startPagerSite,
} from '../support/pagerPages.ts';
import { createPipeline, settledJob, settledRun } from '../support/pipelines.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * A user asks `builtin` for the records of a listing behind each common kind of pager, accepts the
 * analysis, accepts the generation, and runs the version: the run's records are all 15 the site
 * serves, 5 per page or per load, in order.
 */

let stack: TestStack;
let site: Awaited<ReturnType<typeof startPagerSite>>;
let token: string;
let slug: string;
let sessionId: string;

beforeAll(async () => {
  site = await startPagerSite();
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

/**
 * The text values of list records, without the addresses of their links: what the page showed.
 * Sorted within a record, since stored results do not keep the order of a record's keys.
 */
const shown = (records: Record<string, unknown>[]) =>
  records.map((record) =>
    Object.values(record)
      .filter((value) => typeof value === 'string' && !/^https?:\/\//.test(value))
      .sort(),
  );
const served = (records: { title: string; note: string }[]) => records.map((record) => [record.title, record.note].sort());

/**
 * Analysis with builtin → accept → generation with builtin → accept → a run of the accepted
 * version: answers the analysis's extraction step and the run's only output.
 */
async function analyseGenerateAndRun(prompt: string) {
  const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
  const started = await stack.http.put(`${base(pipelineId)}/analysis`, { session: sessionId, model: 'builtin', prompt }, { token });
  expect(started.status, started.text).toBe(200);
  const analysisUrl = `/${slug}/api/analysis/${started.body.id}`;
  const analysis = await settledJob(stack, analysisUrl, { token });
  expect(analysis.error, JSON.stringify(analysis.error)).toBeNull();
  const extraction = analysis.output.steps.at(-1);
  // What the analysis saw, counted as the declaration's count is: per address, the most items of
  // the extracted table or list seen there, summed over addresses. The walk makes it every record.
  const seen = new Map<string, number>();
  for (const message of analysis.messages as { role: string; content: unknown }[]) {
    if (message.role !== 'tool' || !Array.isArray(message.content)) continue;
    for (const part of message.content as { toolName: string; output: { value: PageModel | { pages: PageModel[] } } }[]) {
      // The page models read one by one, and those of the walk through the listing (one call).
      const value = part.output?.value;
      const models =
        part.toolName === 'page_model' && value && 'url' in value
          ? [value]
          : part.toolName === 'walk_listing' && value && 'pages' in value
            ? value.pages
            : [];
      for (const model of models) {
        const count =
          model.tables.find((table) => table.selector === extraction.selector)?.rowCount ??
          model.lists.find((list) => list.itemSelector === extraction.selector)?.count ??
          0;
        seen.set(model.url, Math.max(seen.get(model.url) ?? 0, count));
      }
    }
  }
  expect([...seen.values()].reduce((sum, count) => sum + count, 0)).toBe(15);

  const generationStart = await stack.http.post(`${analysisUrl}/accept`, { model: 'builtin' }, { token });
  expect(generationStart.status, generationStart.text).toBe(200);
  const generationUrl = `/${slug}/api/generation/${generationStart.body.id}`;
  const generation = await settledJob(stack, generationUrl, { token });
  expect(generation.dryRun?.status, JSON.stringify(generation.dryRun ?? generation.error)).toBe('succeeded');
  const accepted = await stack.http.post(`${generationUrl}/accept`, undefined, { token });
  expect(accepted.status, accepted.text).toBe(200);

  const run = await stack.http.post(`${base(pipelineId)}/start`, { session: sessionId }, { token });
  expect(run.status, run.text).toBe(200);
  const ended = await settledRun(stack, `${base(pipelineId)}/${run.body.id}`, { token }, 120_000);
  expect(ended.status.pipeline, JSON.stringify(ended.error)).toBe('succeeded');
  const outputs = Object.values(ended.result as Record<string, Record<string, unknown>[]>);
  expect(outputs).toHaveLength(1);
  return { extraction, records: outputs[0] as Record<string, unknown>[], dryRun: Object.values(generation.dryRun.result)[0] };
}

describe('a listing behind a pager becomes a version that reads every page', () => {
  it('numbered links, the current page a plain <span>: all 15 orders', async () => {
    const { extraction, records, dryRun } = await analyseGenerateAndRun(`Extract the orders from ${site.url}/orders`);
    expect(extraction).toMatchObject({ action: 'extract_table', paging: { kind: 'links' } });
    expect(dryRun).toEqual(pagerOrders);
    expect(records).toEqual(pagerOrders);
  }, 300_000);

  it('a pager with only "Next": all 15 products', async () => {
    const { extraction, records } = await analyseGenerateAndRun(`List the products on ${site.url}/products`);
    expect(extraction).toMatchObject({ action: 'extract_list', paging: { kind: 'links' } });
    expect(shown(records)).toEqual(served(pagerProducts));
  }, 300_000);

  it('"Older stories" / "Newer stories" links: all 15 stories', async () => {
    const { extraction, records } = await analyseGenerateAndRun(`get the stories from ${site.url}/news`);
    expect(extraction).toMatchObject({ action: 'extract_list', paging: { kind: 'links' } });
    expect(shown(records)).toEqual(served(pagerStories));
  }, 300_000);

  it('a rel=next link whose text names no pager word: all 15 posts', async () => {
    const { extraction, records } = await analyseGenerateAndRun(`Collect the posts on ${site.url}/blog`);
    expect(extraction).toMatchObject({ action: 'extract_list', paging: { kind: 'links', selector: 'a[rel~=next]' } });
    expect(shown(records)).toEqual(served(pagerPosts));
  }, 300_000);

  it('a "Load more" button that goes away at the end: all 15 lamps', async () => {
    const { extraction, records } = await analyseGenerateAndRun(`list the lamps in the catalog at ${site.url}/catalog`);
    expect(extraction).toMatchObject({ action: 'extract_list', paging: { kind: 'more' } });
    expect(shown(records)).toEqual(served(pagerCards));
  }, 300_000);

  it('a "Show more" button disabled at the end: all 15 events', async () => {
    const { extraction, records } = await analyseGenerateAndRun(`List the events on ${site.url}/events`);
    expect(extraction).toMatchObject({ action: 'extract_list', paging: { kind: 'more' } });
    expect(shown(records)).toEqual(served(pagerEvents));
  }, 300_000);

  it('a bare "→" rel=next link among the entries themselves: all 15 entries', async () => {
    const { extraction, records } = await analyseGenerateAndRun(`${site.url}/journal entries, all of em`);
    // The page's only <article>s are named by their tag, not by a wrapper a redesign may change.
    expect(extraction).toMatchObject({ action: 'extract_list', selector: 'article', paging: { kind: 'links', selector: 'a[rel~=next]' } });
    expect(shown(records)).toEqual(served(pagerJournal));
  }, 300_000);

  it('numbered links only, "1" among them: each page read once, all 15 reports', async () => {
    // analyseGenerateAndRun checks that the analysis counted 15, not the start page twice.
    const { extraction, records } = await analyseGenerateAndRun(`${site.url}/archive all reports, every page`);
    expect(extraction).toMatchObject({ action: 'extract_list', paging: { kind: 'links' } });
    expect(shown(records)).toEqual(served(pagerArchive));
  }, 300_000);

  it('items named only by labels without colons, behind "Show more": all 15 books, fields named by the labels', async () => {
    const { extraction, records } = await analyseGenerateAndRun(`${site.url}/shelf every book (theres a show more btn)`);
    expect(extraction).toMatchObject({ action: 'extract_list', paging: { kind: 'more' } });
    expect(records).toEqual(pagerShelf);
  }, 300_000);

  it('an infinite scroll: all 15 updates', async () => {
    const { extraction, records } = await analyseGenerateAndRun(`Get every update from the feed at ${site.url}/feed`);
    expect(extraction).toMatchObject({ action: 'extract_list', paging: { kind: 'scroll' } });
    expect(shown(records)).toEqual(served(pagerFeed));
  }, 300_000);
});
