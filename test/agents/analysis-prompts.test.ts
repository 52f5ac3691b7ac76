import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinModel } from '../../server/agents/model/builtin.ts';
import { readPageModel } from '../../server/agents/page/readPageModel.ts';
import { readPromptValues } from '../../server/agents/promptValues.ts';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import { launchChromium } from '../support/chromium.ts';
import {
  FORM_EMAIL,
  FORM_PASSWORD,
  FORM_USER,
  formBooks,
  formBranches,
  formCatalog,
  formHours,
  formOrders,
  formParts,
  formProducts,
  formStaff,
  formStories,
  formSuppliers,
  formTools,
  startFormSite,
} from '../support/formPages.ts';
import { createPipeline, settledJob } from '../support/pipelines.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let site: Awaited<ReturnType<typeof startFormSite>>;
let browser: Browser;
let token: string;
let slug: string;
let sessionId: string;

beforeAll(async () => {
  site = await startFormSite();
  browser = await launchChromium();
  stack = await startTestStack({}, { browserHost: true });
  const owner = await registerUser(stack);
  token = owner.token;
  slug = (await createProject(stack, token)).slug;
  sessionId = (await stack.http.put(`/${slug}/api/sessions`, { name: 'prompts' }, { token })).body.id;
}, 120_000);
afterAll(async () => {
  await stack?.close();
  await browser?.close();
  await site?.close();
});

const jobUrl = (kind: 'analysis' | 'generation', id: string) => `/${slug}/api/${kind}/${id}`;

/** Analysis with builtin, then generation with builtin: the generation, dry run and all. */
async function analyseAndGenerate(prompt: string) {
  const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
  const started = await stack.http.put(
    `/${slug}/api/pipelines/${pipelineId}/analysis`,
    { session: sessionId, model: 'builtin', prompt },
    { token },
  );
  expect(started.status, started.text).toBe(200);
  const analysisUrl = jobUrl('analysis', started.body.id);
  const analysis = await settledJob(stack, analysisUrl, { token });
  expect(analysis.error, JSON.stringify(analysis.error)).toBeNull();
  const accepted = await stack.http.post(`${analysisUrl}/accept`, { model: 'builtin' }, { token });
  expect(accepted.status, accepted.text).toBe(200);
  const generationUrl = jobUrl('generation', accepted.body.id);
  const generation = await settledJob(stack, generationUrl, { token });
  expect(generation.dryRun?.status, JSON.stringify(generation.dryRun)).toBe('succeeded');
  return { analysis, generation, analysisUrl, generationUrl };
}

/** builtin's next answer for a request, given the page model of `path` read by a real Chromium. */
async function builtinAnswer(request: string, path: string) {
  const page = await browser.newPage();
  try {
    await page.goto(`${site.url}${path}`);
    const model = await readPageModel(page);
    const prompt: LanguageModelV4Prompt = [
      { role: 'user', content: [{ type: 'text', text: readPromptValues(request).prompt }] },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'page_model', input: '{}' }] },
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'page_model', output: { type: 'json', value: model as never } }],
      },
    ];
    const { content } = await builtinModel('analysis').doGenerate({ prompt });
    return { model, content };
  } finally {
    await page.close();
  }
}

describe('logging in, however the prompt writes the account', () => {
  const phrasings: [string, string][] = [
    ['by e-mail in double quotes', `/login, log in with email "${FORM_EMAIL}" and password "${FORM_PASSWORD}", and extract the orders`],
    ['by e-mail in single quotes', `/login, log in as '${FORM_EMAIL}' with the password '${FORM_PASSWORD}' and get the orders`],
    ['by e-mail unquoted', `/login, log in as ${FORM_EMAIL} with password ${FORM_PASSWORD} and get me all orders`],
    [
      'by user name in double quotes',
      `/member/login, sign in as username "${FORM_USER}" with password "${FORM_PASSWORD}", list the orders`,
    ],
    ['by user name in single quotes', `/member/login, log in as '${FORM_USER}' with the password '${FORM_PASSWORD}', then the orders`],
    ['by user name unquoted', `/member/login user ${FORM_USER} pw: ${FORM_PASSWORD} orders pls`],
    ['by user name in single quotes, hurried', `/member/login user '${FORM_USER}' pwd '${FORM_PASSWORD}' orders`],
  ];
  for (const [how, rest] of phrasings) {
    it(`a login ${how} leads to the orders, named orders, with the password sealed`, async () => {
      const { analysis, generation } = await analyseAndGenerate(`Open ${site.url}${rest}`);
      expect(analysis.prompt).not.toContain(FORM_PASSWORD);
      expect(analysis.output.steps.map((step: { action: string }) => step.action)).toEqual([
        'goto',
        'fill',
        'fill',
        'click',
        'extract_table',
      ]);
      expect(analysis.output.parameters).toContainEqual({ name: 'password', description: expect.any(String), secret: true });
      expect(generation.dryRun.result).toEqual({ orders: formOrders });
      expect(JSON.stringify(generation)).not.toContain(FORM_PASSWORD);
    }, 240_000);
  }
});

describe('search forms', () => {
  it('a search form is submitted with the keyword the prompt gives, unquoted', async () => {
    const { analysis, generation } = await analyseAndGenerate(`Open ${site.url}/search, search for kettle and list the products`);
    expect(analysis.output.parameters).toContainEqual({ name: 'query', description: expect.any(String), secret: false });
    const kettles = formProducts.filter((product) => /kettle/i.test(product.Product));
    expect(generation.dryRun.result).toEqual({ products: kettles.map((product) => ({ ...product, Price: Number(product.Price) })) });
  }, 240_000);

  it('a search form is submitted empty when the prompt asks for all its results', async () => {
    const { analysis, generation } = await analyseAndGenerate(`Open ${site.url}/search and show all results of the search form`);
    expect(analysis.output.steps.map((step: { action: string }) => step.action)).toEqual(['goto', 'click', 'extract_table']);
    expect(generation.dryRun.result).toEqual({ results: formProducts.map((product) => ({ ...product, Price: Number(product.Price) })) });
  }, 240_000);

  it('a form that says only "Keyword" and "Find parts" is a search, submitted with the hurried keyword', async () => {
    const { analysis, generation } = await analyseAndGenerate(`${site.url}/finder search hose, parts table pls`);
    expect(analysis.output.steps.map((step: { action: string }) => step.action)).toEqual(['goto', 'fill', 'click', 'extract_table']);
    expect(generation.dryRun.result).toEqual({
      parts: formParts.filter((part) => /hose/i.test(part.Part)).map((part) => ({ ...part, Price: Number(part.Price) })),
    });
  }, 240_000);

  it('a search box without a button is submitted with Enter', async () => {
    const { analysis, generation } = await analyseAndGenerate(`Open ${site.url}/books, search for 'dune' and get me the books`);
    expect(analysis.output.steps.map((step: { action: string }) => step.action)).toEqual(['goto', 'fill', 'press', 'extract_list']);
    expect(generation.dryRun.result).toEqual({
      books: formBooks.filter((book) => book.title.startsWith('Dune')).map((book) => ({ title: book.title, author: `by ${book.author}` })),
    });
  }, 240_000);
});

describe('tables, definition lists and lists the way pages write them', () => {
  it('a table with a caption, row headers, a tbody per group and a footer gives one record per data row', async () => {
    const { analysis, generation } = await analyseAndGenerate(`Open ${site.url}/branches and list the branches`);
    const table = analysis.output.pageModel.tables[0];
    expect(table).toMatchObject({ caption: 'Branches', headers: ['Branch', 'City', 'Staff'], rowCount: formBranches.length });
    expect(analysis.output.outputs[0]).toMatchObject({ name: 'branches', kind: 'records', fields: table.headers });
    // The keys the page model named are the keys the table node gives.
    expect(generation.dryRun.result).toEqual({ branches: formBranches });
  }, 240_000);

  it('a table of row headers without a header row keeps its first row as data', async () => {
    const { generation } = await analyseAndGenerate(`Open ${site.url}/hours and get the opening hours`);
    expect(generation.dryRun.result).toEqual({
      hours: formHours.map(([day, opens, closes]) => ({ column1: day, column2: opens, column3: closes })),
    });
  }, 240_000);

  it('a definition list on a page is one record named by its terms, narrowed to the values asked', async () => {
    const { generation } = await analyseAndGenerate(`Open ${site.url}/chair and get the price and weight of the chair`);
    expect(generation.dryRun.result).toEqual({ details: { price: '120.00', weight: '7 kg' } });
  }, 240_000);

  it('definition lists repeated as cards are records whose fields are named by their terms', async () => {
    const { generation } = await analyseAndGenerate(`Open ${site.url}/staff and list the staff`);
    expect(generation.dryRun.result).toEqual({ staff: formStaff });
  }, 240_000);

  it('a list whose markup has classes only gets field names from what it shows, and the prompt’s noun names it', async () => {
    const { analysis, generation } = await analyseAndGenerate(`Open ${site.url}/news, every story on the news page`);
    const fields = analysis.output.pageModel.lists[0].fields.map((field: { name: string }) => field.name);
    expect(fields).toEqual(['title', 'url', 'score', 'author']);
    expect(generation.dryRun.result).toEqual({
      stories: formStories.map((story, index) => ({
        title: story.title,
        url: `${site.url}/story/${index}`,
        score: String(story.score),
        author: `by ${story.author}`,
      })),
    });
  }, 240_000);
});

describe('navigation', () => {
  it('nested navigation named without quotes is followed to the list', async () => {
    const { analysis, generation } = await analyseAndGenerate(`Open ${site.url}/shop, go to Garden then Tools and list the tools`);
    expect(analysis.output.steps.map((step: { action: string }) => step.action)).toEqual(['goto', 'click', 'click', 'extract_list']);
    expect(generation.dryRun.result).toEqual({ tools: formTools });
  }, 240_000);

  it('detail pages reached from the links of a table’s rows give a record each, named by their terms', async () => {
    const { analysis, generation } = await analyseAndGenerate(`${site.url}/suppliers open each supplier and grab its details`);
    expect(analysis.output.steps.at(-1)).toMatchObject({ action: 'extract_fields', pagesSelector: expect.any(String) });
    expect(generation.dryRun.result).toEqual({ suppliers: formSuppliers });
  }, 240_000);

  it('asked for each item’s page where no row or item links to one, builtin answers goalNotFound, never the listing', async () => {
    const { content } = await builtinAnswer(`Open ${site.url}/branches and open each branch's page for its details`, '/branches');
    const answer = JSON.parse((content[0] as { text: string }).text);
    expect(answer.goalNotFound).toContain('each item’s own page');
    expect(answer.goalNotFound).toContain('a table "Branches"');
  }, 60_000);

  it('detail pages reached from a list give a record each, named by their terms', async () => {
    const { generation } = await analyseAndGenerate(`Open ${site.url}/catalog and open each product to get its price and weight`);
    expect(generation.dryRun.result).toEqual({ products: formCatalog });
  }, 240_000);
});

describe('a page without what the prompt asks for', () => {
  // builtin's own answer, from page models a real Chromium reads; then the job it ends.
  it('builtin answers goalNotFound, naming what the page does show, and never proposes the heading', async () => {
    const bare = await builtinAnswer(`Open ${site.url}/about and get me all invoices`, '/about');
    expect(bare.model.headings.length).toBeGreaterThan(0);
    const [answer] = bare.content;
    expect(answer?.type).toBe('text');
    const parsed = JSON.parse((answer as { text: string }).text);
    expect(parsed).toEqual({ goalNotFound: expect.stringContaining('shows no invoices') });

    const other = await builtinAnswer(`Open ${site.url}/branches and get me all invoices`, '/branches');
    const otherAnswer = JSON.parse((other.content[0] as { text: string }).text);
    expect(otherAnswer.goalNotFound).toContain('a table "Branches" (Branch, City, Staff)');

    // The same page asked for what it holds: a proposal, not goalNotFound.
    const fits = await builtinAnswer(`Open ${site.url}/branches and get me all branches`, '/branches');
    expect(JSON.parse((fits.content[0] as { text: string }).text).steps.at(-1)).toMatchObject({
      action: 'extract_table',
      output: 'branches',
    });
  }, 60_000);

  it('an analysis of such a page ends goal_not_found, naming what the page showed, and never with a proposal', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
    const started = await stack.http.put(
      `/${slug}/api/pipelines/${pipelineId}/analysis`,
      { session: sessionId, model: 'builtin', prompt: `Open ${site.url}/about and get me all invoices` },
      { token },
    );
    expect(started.status, started.text).toBe(200);
    const analysis = await settledJob(stack, jobUrl('analysis', started.body.id), { token }, 180_000);
    expect(analysis.error.code, JSON.stringify(analysis.error)).toBe('goal_not_found');
    expect(analysis.error.message).toContain('shows no invoices');
    expect(analysis.output).toBeNull();
  }, 240_000);
});

describe('secrets in prompts, however they are written', () => {
  it('no phrasing lets the value reach an API response, a job log line or the workflow history', async () => {
    const apiKey = await createApiKey(stack, token, { accessType: 'full' });
    const phrasings: [string, string][] = [
      ['hunter2zz', `Open ${site.url}/login, log in as ${FORM_EMAIL} with password hunter2zz and list the orders`],
      ['Xq7-zz', `Open ${site.url}/member/login user ${FORM_USER} pw: Xq7-zz orders pls`],
      ['pass-w0rd-9', `Open ${site.url}/login and log in as '${FORM_EMAIL}' with the password 'pass-w0rd-9', the orders`],
      ['abc123def456ghi', `Open ${site.url}/branches with token abc123def456ghi and list the branches`],
    ];
    for (const [secret, prompt] of phrasings) {
      const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
      const started = await stack.http.put(
        `/${slug}/api/pipelines/${pipelineId}/analysis`,
        { session: sessionId, model: 'builtin', prompt },
        { token },
      );
      expect(started.status, started.text).toBe(200);
      expect(started.text).not.toContain(secret);
      const url = jobUrl('analysis', started.body.id);
      const analysis = await settledJob(stack, url, { token });
      expect(analysis.prompt, prompt).toMatch(/\{\{(password|secret)\}\}/);
      const texts = {
        job: (await stack.http.get(url, { token })).text,
        jobByKey: (await stack.http.get(url, { apiKey: apiKey.secret })).text,
        list: (await stack.http.get(`/${slug}/api/pipelines/${pipelineId}/analysis`, { token })).text,
        logs: (await stack.http.get(`${url}/logs?limit=200`, { token })).text,
        history: await workflowHistoryText(`analysis-${started.body.id}`),
      };
      expect(JSON.parse(texts.logs).length, 'the job logged lines').toBeGreaterThan(0);
      for (const [place, text] of Object.entries(texts)) expect(text, `${place} holds ${secret}`).not.toContain(secret);
    }
  }, 600_000);
});

/** A workflow's history as text, payloads decoded (base64 in the history's JSON), so a value in them shows. */
async function workflowHistoryText(workflowId: string) {
  const history = await stack.temporal.workflow.getHandle(workflowId).fetchHistory();
  return JSON.stringify(history, (key, value) =>
    key === 'data' && typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : value,
  );
}
