import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageRecord } from '../../db/entities/index.ts';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import { startTestSite } from '../support/pages.ts';
import { createPipeline, settledJob, settledRun } from '../support/pipelines.ts';
import { SHOP_EMAIL, SHOP_PASSWORD, shopOrders, startShopSite } from '../support/shopSite.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

type ScriptedAnswer = { toolCalls?: { name: string; args: unknown }[]; content?: unknown };
/** What the stand-in received: an OpenAI chat request. */
type ChatRequest = { tools?: unknown[]; messages: { role: string; content: unknown }[] };

/**
 * A local OpenAI-compatible server replaying a scripted conversation: the one stand-in allowed,
 * since cloud models are out of reach here. It answers analysis calls (those with tools) and
 * generation calls from two scripts, and keeps every request it received. An entry may be a
 * function of the request: it answers from what the conversation holds, as a model reads it.
 */
async function startScriptedModel() {
  const received: string[] = [];
  type Entry = ScriptedAnswer | ((request: ChatRequest) => ScriptedAnswer);
  const scripts: { analysis: Entry[]; generation: Entry[] } = { analysis: [], generation: [] };
  let delayMs = 0;
  let n = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', async () => {
      received.push(body);
      const request = JSON.parse(body) as ChatRequest;
      const queue = request.tools?.length ? scripts.analysis : scripts.generation;
      const entry = queue.shift();
      const next = typeof entry === 'function' ? entry(request) : entry;
      if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
      const message = next?.toolCalls
        ? {
            role: 'assistant',
            content: null,
            tool_calls: next.toolCalls.map((call) => ({
              id: `call_${++n}`,
              type: 'function',
              function: { name: call.name, arguments: JSON.stringify(call.args) },
            })),
          }
        : { role: 'assistant', content: JSON.stringify(next?.content ?? {}) };
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          id: `cmpl_${n}`,
          object: 'chat.completion',
          created: 1,
          model: 'scripted-1',
          choices: [{ index: 0, message, finish_reason: next?.toolCalls ? 'tool_calls' : 'stop' }],
          usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    received,
    scripts,
    setDelay: (ms: number) => {
      delayMs = ms;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let stack: TestStack;
let shop: Awaited<ReturnType<typeof startShopSite>>;
let model: Awaited<ReturnType<typeof startScriptedModel>>;
let token: string;
let slug: string;
let sessionId: string;

beforeAll(async () => {
  shop = await startShopSite();
  model = await startScriptedModel();
  stack = await startTestStack(
    {
      MODELS: JSON.stringify([
        { id: 'scripted', provider: 'openai-compatible', model: 'scripted-1', baseUrl: model.url, roles: ['analysis', 'generation'] },
      ]),
      // The local model is slow when it wanders: a bound keeps its test short.
      AGENT_MAX_SECONDS: '150',
    },
    { browserHost: true },
  );
  const owner = await registerUser(stack);
  token = owner.token;
  slug = (await createProject(stack, token)).slug;
  sessionId = (await stack.http.put(`/${slug}/api/sessions`, { name: 'shopper' }, { token })).body.id;
}, 120_000);
afterAll(async () => {
  await stack?.close();
  await shop?.close();
  await model?.close();
});

const base = (pipelineId: string) => `/${slug}/api/pipelines/${pipelineId}`;
/** A job's own routes name it alone, not its pipeline (spec: `…/analysis/{analysisId}`). */
const jobUrl = (kind: 'analysis' | 'generation', id: string, project = slug) => `/${project}/api/${kind}/${id}`;

/** A source that signs in to the shop and reads `nodes`: what a model writes when it leaves the draft. */
const signedIn = (nodes: Record<string, unknown>, outputs: Record<string, unknown>) => ({
  parameters: { email: { refType: 'string', default: SHOP_EMAIL }, password: { refType: 'string', secret: true } },
  nodes: {
    browser: { type: 'browser.page' },
    open: { type: 'page.goto', inputs: { page: { $ref: 'browser.page' }, url: `${shop.url}/login` } },
    email: { type: 'page.fill', inputs: { page: { $ref: 'open.page' }, selector: '#email', value: { $param: 'email' } } },
    pass: { type: 'page.fill', inputs: { page: { $ref: 'email.page' }, selector: '#password', value: { $param: 'password' } } },
    go: { type: 'page.click', inputs: { page: { $ref: 'pass.page' }, selector: 'role=button[name="Sign in"s]', waitFor: 'load' } },
    ...nodes,
  },
  outputs,
});

async function analyse(pipelineId: string, prompt: string, modelId = 'builtin') {
  const started = await stack.http.put(`${base(pipelineId)}/analysis`, { session: sessionId, model: modelId, prompt }, { token });
  expect(started.status, started.text).toBe(200);
  return jobUrl('analysis', started.body.id);
}

async function generate(analysisUrl: string, modelId = 'builtin') {
  const accepted = await stack.http.post(`${analysisUrl}/accept`, { model: modelId }, { token });
  expect(accepted.status, accepted.text).toBe(200);
  return jobUrl('generation', accepted.body.id);
}

describe('analysis → generation with builtin', () => {
  it('a login form leading to a paged orders table becomes a version that extracts every order', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
    const models = await stack.http.get(`/${slug}/api/pipelines/analysis/models`, { token });
    const local = stack.config.agents.localModel ? ['local'] : [];
    expect(models.body.map((entry: { id: string }) => entry.id)).toEqual(['builtin', ...local, 'scripted']);
    const generationModels = await stack.http.get(`/${slug}/api/pipelines/generation/models`, { token });
    expect(generationModels.body.map((entry: { id: string }) => entry.id)).toEqual(['builtin', 'scripted']);
    const analysisUrl = await analyse(
      pipelineId,
      `Open ${shop.url}/login, log in with email "${SHOP_EMAIL}" and password "${SHOP_PASSWORD}", and extract the orders from every page`,
    );
    const analysis = await settledJob(stack, analysisUrl, { token });
    expect(analysis.error).toBeNull();
    expect(analysis.prompt).not.toContain(SHOP_PASSWORD);
    expect(analysis.output.steps.map((step: { action: string }) => step.action)).toEqual([
      'goto',
      'fill',
      'fill',
      'click',
      'extract_table',
    ]);
    expect(analysis.output.parameters).toContainEqual({ name: 'password', description: expect.any(String), secret: true });
    expect(analysis.usage.calls).toBeGreaterThan(1);
    // The proposal on pictures of its pages: the sign-in form with its fields and button boxed, then the table.
    const pictures = analysis.screenshots as { kind: string; pageUrl: string; url: string; boxes: { step: number; width: number }[] }[];
    expect(pictures.map((picture) => picture.boxes.map((box) => box.step))).toEqual([[1, 2, 3], [4]]);
    expect(pictures.every((picture) => picture.kind === 'proposal' && picture.boxes.every((box) => box.width > 0))).toBe(true);
    const picture = await fetch(pictures[0]?.url as string, { headers: { authorization: `Bearer ${token}` } });
    expect([picture.status, picture.headers.get('content-type')]).toEqual([200, 'image/jpeg']);

    const generationUrl = await generate(analysisUrl);
    const generation = await settledJob(stack, generationUrl, { token });
    expect(generation.error).toBeNull();
    expect(generation.errors).toEqual([]);
    expect(generation.dryRun.status).toBe('succeeded');
    expect(generation.dryRun.result.orders).toEqual(shopOrders);
    // Checked against the declaration the service completed from the page models.
    expect(generation.dryRun.mismatches).toEqual([]);
    // A dry run takes a picture after each browser step: the sign-in typed, the table read.
    const shots = generation.dryRun.screenshots as { node: string; kind: string; url: string }[];
    expect(shots.length).toBeGreaterThanOrEqual(5);
    expect(new Set(shots.map((shot) => shot.kind))).toEqual(new Set(['step']));
    const image = await fetch(shots.at(-1)?.url as string, { headers: { authorization: `Bearer ${token}` } });
    expect([image.status, image.headers.get('content-type')]).toEqual([200, 'image/jpeg']);
    expect(analysis.output.outputs).toMatchObject([{ name: 'orders', kind: 'records', fields: ['Order', 'Total', 'Status'] }]);

    const accepted = await stack.http.post(`${generationUrl}/accept`, undefined, { token });
    expect(accepted.status, accepted.text).toBe(200);
    const pipeline = await stack.http.get(base(pipelineId), { token });
    expect(pipeline.body.version).toBe(accepted.body.id);
    expect(pipeline.body.source.parameters.password).toMatchObject({ secret: true });
    expect(JSON.stringify(pipeline.body.source)).not.toContain(SHOP_PASSWORD);

    const run = await stack.http.post(`${base(pipelineId)}/start`, { session: sessionId, args: { password: SHOP_PASSWORD } }, { token });
    expect(run.status, run.text).toBe(200);
    const ended = await settledRun(stack, `${base(pipelineId)}/${run.body.id}`, { token });
    expect(ended.status.pipeline).toBe('succeeded');
    expect(ended.result.orders).toEqual(shopOrders);

    // Nothing the jobs show or log holds the password.
    for (const url of [analysisUrl, generationUrl, `${analysisUrl}/logs?limit=200`, `${generationUrl}/logs?limit=200`]) {
      expect((await stack.http.get(url, { token })).text).not.toContain(SHOP_PASSWORD);
    }
    const list = await stack.http.get(`${base(pipelineId)}/generation`, { token });
    expect(list.body[0]).toMatchObject({ id: generation.id, status: 'accepted', agent: 'stopped' });
  }, 180_000);

  it('a search form with a results list becomes a version that lists what the search found', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
    const analysisUrl = await analyse(pipelineId, `Open ${shop.url}/search, search for "red" and list the results`);
    const analysis = await settledJob(stack, analysisUrl, { token });
    expect(analysis.error).toBeNull();
    const generationUrl = await generate(analysisUrl);
    const generation = await settledJob(stack, generationUrl, { token });
    expect(generation.dryRun?.status, JSON.stringify(generation.dryRun)).toBe('succeeded');
    const accepted = await stack.http.post(`${generationUrl}/accept`, undefined, { token });
    const run = await stack.http.post(`${base(pipelineId)}/start`, { session: sessionId }, { token });
    const ended = await settledRun(stack, `${base(pipelineId)}/${run.body.id}`, { token });
    expect(accepted.status).toBe(200);
    expect(ended.status.pipeline, JSON.stringify(ended.error)).toBe('succeeded');
    const [records] = Object.values(ended.result) as { title: string; price: string }[][];
    expect(records?.map((record) => record.title)).toEqual(['Red kettle', 'Red mug', 'Red teapot']);
  }, 180_000);
});

describe('state rules', () => {
  it('refuses a model outside the allow-list, accepting after a stop without output, and accepting a rejected analysis', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
    const wrong = await stack.http.put(`${base(pipelineId)}/analysis`, { session: sessionId, model: 'gpt-nope', prompt: 'x' }, { token });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('model_not_allowed');

    // A slow scripted model: the analysis is still running when it is accepted, then stopped.
    model.setDelay(4000);
    model.scripts.analysis.push({ toolCalls: [{ name: 'page_model', args: {} }] }, { toolCalls: [{ name: 'page_model', args: {} }] });
    const analysisUrl = await analyse(pipelineId, `Open ${shop.url}/search and list the results`, 'scripted');
    const early = await stack.http.post(`${analysisUrl}/accept`, { model: 'builtin' }, { token });
    expect(early.status).toBe(400);
    expect(early.body.code).toBe('analysis_running');
    const stopped = await stack.http.post(`${analysisUrl}/stop`, undefined, { token });
    expect(stopped.body.agent).toBe('stopped');
    const afterStop = await stack.http.post(`${analysisUrl}/accept`, { model: 'builtin' }, { token });
    expect(afterStop.status).toBe(400);
    expect(afterStop.body.code).toBe('analysis_without_output');
    model.setDelay(0);
    model.scripts.analysis.length = 0;

    const finished = await analyse(pipelineId, `Open ${shop.url}/search, search for "red" and list the results`);
    await settledJob(stack, finished, { token });
    expect((await stack.http.post(`${finished}/reject`, undefined, { token })).body.status).toBe('rejected');
    const rejected = await stack.http.post(`${finished}/accept`, { model: 'builtin' }, { token });
    expect(rejected.status).toBe(400);
    expect(rejected.body.code).toBe('analysis_rejected');
    expect((await stack.http.delete(finished, { token })).status).toBe(200);
    expect((await stack.http.get(finished, { token })).status).toBe(404);
  }, 120_000);
});

describe('bounds and generation states', () => {
  it('an agent that never answers with a valid proposal stops at its step bound and says so', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
    model.scripts.analysis.length = 0; // every answer is `{}`: refused, fed back, refused again
    const analysis = await settledJob(stack, await analyse(pipelineId, `Open ${shop.url}/search and list the results`, 'scripted'), {
      token,
    });
    expect(analysis.error).toMatchObject({ code: 'step_limit' });
    expect(analysis.output).toBeNull();
    expect(analysis.usage.calls).toBe(24);
  }, 120_000);

  it('a generation is accepted only once stopped, and only when its source compiles', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
    const analysisUrl = await analyse(pipelineId, `Open ${shop.url}/search, search for "red" and list the results`);
    await settledJob(stack, analysisUrl, { token });
    // A slow generation model: still running when accepted.
    model.setDelay(3000);
    model.scripts.generation.push(
      { content: { nodes: { broken: { type: 'no.such.node' } } } },
      { content: { nodes: { broken: { type: 'no.such.node' } } } },
    );
    const generationUrl = await generate(analysisUrl, 'scripted');
    const early = await stack.http.post(`${generationUrl}/accept`, undefined, { token });
    expect(early.status).toBe(400);
    expect(early.body.code).toBe('generation_running');
    expect((await stack.http.post(`${generationUrl}/stop`, undefined, { token })).body.agent).toBe('stopped');
    model.setDelay(0);
    model.scripts.generation.length = 0;
    const accepted = await stack.http.post(`${generationUrl}/accept`, undefined, { token });
    expect(accepted.status).toBe(400);
    expect(accepted.body.code).toBe('generation_without_output');

    // A model that never writes a source that compiles: four attempts, then the job stops with it.
    const broken = { content: { nodes: { broken: { type: 'no.such.node' } } } };
    model.scripts.generation.push(broken, broken, broken, broken);
    const exhaustedUrl = await generate(analysisUrl, 'scripted');
    const exhausted = await settledJob(stack, exhaustedUrl, { token });
    expect(exhausted.error).toMatchObject({ code: 'attempts_exhausted' });
    expect(exhausted.attempts).toBe(4);
    expect(exhausted.errors[0]).toMatchObject({ node: 'broken', code: 'unknown_type' });
    const refused = await stack.http.post(`${exhaustedUrl}/accept`, undefined, { token });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'generation_does_not_compile', issues: [{ path: ['broken'], code: 'unknown_type' }] });
    expect((await stack.http.post(`${generationUrl}/reject`, undefined, { token })).body.status).toBe('rejected');
    expect((await stack.http.delete(generationUrl, { token })).status).toBe(200);
    const left = (await stack.http.get(`${base(pipelineId)}/generation`, { token })).body;
    expect(left.map((job: { id: string }) => job.id)).toEqual([exhausted.id]);
  }, 120_000);
});

describe('permissions', () => {
  it('starting needs pipelines.write and sessions.write; reading needs sessions.read on the job’s session', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
    const analysisUrl = await analyse(pipelineId, `Open ${shop.url}/search, search for "red" and list the results`);
    await settledJob(stack, analysisUrl, { token });
    const pipelinesOnly = await createApiKey(stack, token, {
      accessType: 'custom',
      permissions: [`${slug}.pipelines.*`, `${slug}.sessions.read`],
    });
    const refused = await stack.http.put(
      `${base(pipelineId)}/analysis`,
      { session: sessionId, model: 'builtin', prompt: 'list it' },
      { apiKey: pipelinesOnly.secret },
    );
    expect(refused.status).toBe(403);
    const noSessions = await createApiKey(stack, token, { accessType: 'custom', permissions: [`${slug}.pipelines.*`] });
    expect((await stack.http.get(analysisUrl, { apiKey: noSessions.secret })).status).toBe(404);
    expect((await stack.http.get(`${base(pipelineId)}/analysis`, { apiKey: noSessions.secret })).body).toEqual([]);
    expect((await stack.http.get(analysisUrl, { apiKey: pipelinesOnly.secret })).status).toBe(200);
    const readOnly = await createApiKey(stack, token, {
      accessType: 'custom',
      permissions: [`${slug}.pipelines.read`, `${slug}.sessions.read`],
    });
    expect((await stack.http.post(`${analysisUrl}/reject`, undefined, { apiKey: readOnly.secret })).status).toBe(403);
  }, 120_000);

  it('a job is found by its id in its own project only; one the caller may not read is a 404 like an unknown id', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
    const analysisUrl = await analyse(pipelineId, `Open ${shop.url}/search, search for "red" and list the results`);
    const analysis = await settledJob(stack, analysisUrl, { token });
    const generationUrl = await generate(analysisUrl);
    const generation = await settledJob(stack, generationUrl, { token });
    const jobs = [
      { kind: 'analysis' as const, id: analysis.id as string },
      { kind: 'generation' as const, id: generation.id as string },
    ];
    const otherSlug = (await createProject(stack, token)).slug;
    // pipelines.* on another pipeline of the project only, sessions.read on all of them.
    const otherPipeline = await createPipeline(stack, slug, { token }, { nodes: {} });
    const elsewhere = await createApiKey(stack, token, {
      accessType: 'custom',
      permissions: [`${slug}.pipelines.read.${otherPipeline}`, `${slug}.pipelines.write.${otherPipeline}`, `${slug}.sessions.read`],
    });
    for (const { kind, id } of jobs) {
      expect((await stack.http.get(jobUrl(kind, id), { token })).status).toBe(200);
      expect((await stack.http.get(`${jobUrl(kind, id)}/logs`, { token })).status).toBe(200);
      // The path under the pipeline is gone.
      expect((await stack.http.get(`${base(pipelineId)}/${kind}/${id}`, { token })).status).toBe(404);
      expect((await stack.http.get(`${base(pipelineId)}/${kind}/${id}/logs`, { token })).status).toBe(404);
      for (const url of [jobUrl(kind, id, otherSlug), jobUrl(kind, crypto.randomUUID()), jobUrl(kind, 'not-a-uuid')]) {
        const read = await stack.http.get(url, { token });
        expect(read.status, url).toBe(404);
        expect(read.body).toMatchObject({ code: 'not_found' });
        expect((await stack.http.get(`${url}/logs`, { token })).status, url).toBe(404);
        expect((await stack.http.post(`${url}/reject`, undefined, { token })).status, url).toBe(404);
        expect((await stack.http.delete(url, { token })).status, url).toBe(404);
      }
      // An analysis's id names no generation, and the reverse.
      const swapped = jobUrl(kind === 'analysis' ? 'generation' : 'analysis', id);
      expect((await stack.http.get(swapped, { token })).status).toBe(404);
      for (const answer of [
        await stack.http.get(jobUrl(kind, id), { apiKey: elsewhere.secret }),
        await stack.http.get(`${jobUrl(kind, id)}/logs`, { apiKey: elsewhere.secret }),
        await stack.http.post(`${jobUrl(kind, id)}/stop`, undefined, { apiKey: elsewhere.secret }),
        await stack.http.delete(jobUrl(kind, id), { apiKey: elsewhere.secret }),
      ]) {
        expect(answer.status).toBe(404);
      }
    }
    // None of the refused calls reached the jobs.
    expect((await stack.http.get(analysisUrl, { token })).body.status).toBe('accepted');
    expect((await stack.http.get(generationUrl, { token })).body.status).toBe('pending');
  }, 120_000);
});

describe('the local model (SmolLM2-135M-Instruct through node-llama-cpp)', () => {
  // scripts/setup.sh fetches the model; without it (PyPI out of reach) there is nothing to drive.
  it.runIf(existsSync('.models/SmolLM2-135M-Instruct.Q4_1.gguf'))(
    'drives the chain: every answer holds to the grammar, and what it proposes is compiled and dry-run',
    async () => {
      const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
      const analysisUrl = await analyse(pipelineId, `Open ${shop.url}/search, search for "red" and list the results`, 'local');
      const analysis = await settledJob(stack, analysisUrl, { token }, 180_000);
      // The floor: every turn of the model was a valid choice (tool calls, or a proposal the schema took).
      const refusals = analysis.messages.filter(
        (message: { role: string; content: { text?: string }[] }) =>
          message.role === 'user' && message.content[0]?.text?.startsWith('Your proposal was refused'),
      );
      expect(refusals).toEqual([]);
      expect(analysis.usage.calls).toBeGreaterThan(1);
      expect(analysis.usage.outputTokens).toBeGreaterThan(0);
      if (analysis.output) {
        const generation = await settledJob(stack, await generate(analysisUrl), { token });
        expect(generation.errors).toEqual([]);
        expect(['succeeded', 'failed']).toContain(generation.dryRun.status);
      } else {
        expect(analysis.error.code).toMatch(/step_limit|token_limit|time_limit/);
      }
    },
    240_000,
  );
});

describe('a model through the AI SDK (scripted OpenAI-compatible stand-in)', () => {
  it('drives the browser with tool calls, gets invalid answers and compile and run errors back, records usage, and never sees a secret', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
    model.received.length = 0;
    const proposal = (selector: string) => ({
      goal: 'the orders',
      startUrl: `${shop.url}/login`,
      steps: [
        { action: 'goto', url: `${shop.url}/login`, evidence: 'login page' },
        { action: 'fill', selector: '#email', value: '{{email}}', evidence: 'e-mail field' },
        { action: 'fill', selector: '#password', value: '{{password}}', evidence: 'password field' },
        { action: 'click', selector: 'role=button[name="Sign in"s]', waitForLoad: true, evidence: 'sign-in button' },
        { action: 'extract_table', selector, output: 'orders', evidence: 'the orders table' },
      ],
      parameters: [
        { name: 'email', description: 'e-mail', secret: false },
        { name: 'password', description: 'password', secret: true },
      ],
      outputs: [{ name: 'orders', description: 'orders of the first page' }],
      risks: [],
    });
    model.scripts.analysis.push(
      { toolCalls: [{ name: 'page_model', args: {} }] },
      {
        toolCalls: [
          { name: 'fill', args: { selector: '#email', value: '{{email}}' } },
          { name: 'fill', args: { selector: '#password', value: '{{password}}' } },
          { name: 'click', args: { selector: 'role=button[name="Sign in"s]', waitForLoad: true } },
          { name: 'page_model', args: {} },
        ],
      },
      { content: proposal('table.guessed') },
      { content: proposal('#orders') },
    );
    const analysisUrl = await analyse(
      pipelineId,
      `Open ${shop.url}/login, log in with email "${SHOP_EMAIL}" and password "${SHOP_PASSWORD}" and read the orders`,
      'scripted',
    );
    const analysis = await settledJob(stack, analysisUrl, { token });
    expect(analysis.error).toBeNull();
    expect(analysis.output.pageModel.tables[0].selector).toBe('#orders');
    // The tool calls reached the browser: the second page model is the signed-in orders page.
    expect(analysis.output.pageModel.url).toContain('/orders');
    expect(model.received.some((body) => body.includes('not in any page model you were shown'))).toBe(true);

    model.scripts.generation.push(
      { content: signedIn({ orders: { type: 'extract.tabel', inputs: {} } }, {}) },
      {
        content: signedIn(
          { orders: { type: 'extract.text', timeoutMs: 2000, inputs: { page: { $ref: 'go.page' }, selector: '#email' } } },
          { orders: { $ref: 'orders.text' } },
        ),
      },
      {
        content: signedIn(
          { orders: { type: 'extract.table', inputs: { page: { $ref: 'go.page' }, selector: '#orders' } } },
          { orders: { $ref: 'orders.records' } },
        ),
      },
    );
    const generationUrl = await generate(analysisUrl, 'scripted');
    const generation = await settledJob(stack, generationUrl, { token });
    expect(generation.error).toBeNull();
    expect(generation.attempts).toBe(3);
    expect(generation.dryRun.status).toBe('succeeded');
    expect(generation.dryRun.result.orders).toEqual(shopOrders.slice(0, 3));
    expect(model.received.some((body) => body.includes('does not compile') && body.includes('unknown_type'))).toBe(true);
    expect(model.received.some((body) => body.includes('dry run on the page failed'))).toBe(true);
    expect(generation.usage).toMatchObject({ inputTokens: 300, outputTokens: 60, calls: 3 });
    expect(analysis.usage).toMatchObject({ inputTokens: 400, outputTokens: 80, calls: 4 });
    const usage = await stack.orm.em.fork().find(UsageRecord, { resourceId: { $in: [analysis.id, generation.id] }, unit: 'tokens' });
    expect(usage.reduce((sum, record) => sum + Number(record.amount), 0)).toBe(840);

    // What the model received never held the password; its requests name it only as {{password}}.
    expect(model.received.length).toBe(7);
    for (const body of model.received) expect(body).not.toContain(SHOP_PASSWORD);
    expect(model.received[0]).toContain('{{password}}');
    expect((await stack.http.post(`${generationUrl}/accept`, undefined, { token })).status).toBe(200);
  }, 180_000);
});

/** A message's text, whether the request holds it as a string or as parts. */
const textOf = (content: unknown) =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((part) => part?.text ?? '').join('') : '';

/** The page models a request's conversation holds: the page_model tool's results, as the model reads them. */
function pageModelsIn(request: ChatRequest) {
  return request.messages
    .filter((message) => message.role === 'tool')
    .map((message) => JSON.parse(textOf(message.content)))
    .filter((value) => value && typeof value === 'object' && 'tables' in value) as {
    url: string;
    headings: { selector: string }[];
    pagination: { selector?: string } | null;
  }[];
}

const generationRequests = () => model.received.filter((body) => !(JSON.parse(body) as ChatRequest).tools?.length);

describe('verified outputs through the AI SDK (scripted OpenAI-compatible stand-in)', () => {
  /**
   * A model that signs in, reads the orders page and the two pages after it, and proposes reading
   * the table on every page: the analysis saw 3 + 3 + 1 orders, so the output is declared as 7.
   */
  function scriptOrdersAnalysis() {
    model.scripts.analysis.push(
      { toolCalls: [{ name: 'page_model', args: {} }] },
      {
        toolCalls: [
          { name: 'fill', args: { selector: '#email', value: '{{email}}' } },
          { name: 'fill', args: { selector: '#password', value: '{{password}}' } },
          { name: 'click', args: { selector: 'role=button[name="Sign in"s]', waitForLoad: true } },
          { name: 'page_model', args: {} },
        ],
      },
      {
        toolCalls: [
          { name: 'navigate', args: { url: `${shop.url}/orders?page=2` } },
          { name: 'page_model', args: {} },
        ],
      },
      {
        toolCalls: [
          { name: 'navigate', args: { url: `${shop.url}/orders?page=3` } },
          { name: 'page_model', args: {} },
        ],
      },
      (request) => {
        const pager = pageModelsIn(request).find((seen) => seen.pagination)?.pagination;
        return {
          content: {
            goal: 'every order',
            startUrl: `${shop.url}/login`,
            steps: [
              { action: 'goto', url: `${shop.url}/login`, evidence: 'login page' },
              { action: 'fill', selector: '#email', value: '{{email}}', evidence: 'e-mail field' },
              { action: 'fill', selector: '#password', value: '{{password}}', evidence: 'password field' },
              { action: 'click', selector: 'role=button[name="Sign in"s]', waitForLoad: true, evidence: 'sign-in button' },
              {
                action: 'extract_table',
                selector: '#orders',
                paging: { kind: 'links', selector: pager?.selector },
                output: 'orders',
                evidence: 'the table, 3 pages',
              },
            ],
            parameters: [
              { name: 'email', description: 'e-mail', secret: false },
              { name: 'password', description: 'password', secret: true },
            ],
            outputs: [{ name: 'orders', description: 'every order' }],
            risks: [],
          },
        };
      },
    );
  }

  async function ordersAnalysis(pipelineId: string) {
    scriptOrdersAnalysis();
    const analysisUrl = await analyse(
      pipelineId,
      `Open ${shop.url}/login, log in with email "${SHOP_EMAIL}" and password "${SHOP_PASSWORD}" and read the orders on every page`,
      'scripted',
    );
    const analysis = await settledJob(stack, analysisUrl, { token });
    expect(analysis.error).toBeNull();
    return { analysisUrl, analysis };
  }

  it('a first attempt that reads only the first page runs green, is told what differs, and is repaired from the draft', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
    model.received.length = 0;
    const { analysisUrl, analysis } = await ordersAnalysis(pipelineId);
    // The service completed the declaration from the pages the analysis read.
    expect(analysis.output.outputs).toEqual([
      { name: 'orders', description: 'every order', kind: 'records', fields: ['Order', 'Total', 'Status'], count: 7 },
    ]);

    model.received.length = 0;
    model.scripts.generation.push(
      {
        content: signedIn(
          { orders: { type: 'extract.table', inputs: { page: { $ref: 'go.page' }, selector: '#orders' } } },
          { orders: { $ref: 'orders.records' } },
        ),
      },
      // Told that it read 3 of 7 orders, the model takes the draft it was given, which reads every page.
      (request) => {
        const first = textOf(request.messages.find((message) => message.role === 'user')?.content);
        return { content: JSON.parse(/<draft>([\s\S]*?)<\/draft>/.exec(first)?.[1] ?? '{}') };
      },
    );
    const generationUrl = await generate(analysisUrl, 'scripted');
    const generation = await settledJob(stack, generationUrl, { token });
    expect(generation.error).toBeNull();
    expect(generation.attempts).toBe(2);
    expect(generation.errors).toEqual([]);
    expect(generation.dryRun).toMatchObject({ status: 'succeeded', mismatches: [] });
    expect(generation.dryRun.result.orders).toEqual(shopOrders);

    const [firstRequest, secondRequest] = generationRequests();
    expect(firstRequest).toContain('<draft>');
    expect(secondRequest).toContain('orders: 3 record(s) where the analysis saw 7 across the pages it visited');
    for (const body of model.received) expect(body).not.toContain(SHOP_PASSWORD);

    // Verified: accepted without force.
    const accepted = await stack.http.post(`${generationUrl}/accept`, undefined, { token });
    expect(accepted.status, accepted.text).toBe(200);
    expect((await stack.http.get(base(pipelineId), { token })).body.version).toBe(accepted.body.id);
  }, 180_000);

  it('a result that stays wrong ends output_mismatch, and accepting it needs force', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
    const { analysisUrl } = await ordersAnalysis(pipelineId);
    model.received.length = 0;
    // The heading, not the orders: it compiles and runs green every time.
    const heading = {
      content: signedIn(
        { orders: { type: 'extract.text', inputs: { page: { $ref: 'go.page' }, selector: 'h1' } } },
        { orders: { $ref: 'orders.text' } },
      ),
    };
    model.scripts.generation.push(heading, heading, heading, heading);
    const generationUrl = await generate(analysisUrl, 'scripted');
    const generation = await settledJob(stack, generationUrl, { token }, 150_000);
    const difference =
      'orders: a single value ("Your orders") where a list of records was declared; the analysis saw 7 across the pages it visited';
    expect(generation.error).toEqual({ code: 'output_mismatch', message: difference });
    expect(generation.attempts).toBe(4);
    expect(generation.dryRun).toMatchObject({
      status: 'succeeded',
      result: { orders: 'Your orders' },
      mismatches: [{ output: 'orders', kind: 'not_records', message: difference }],
    });
    expect(generation.errors).toEqual([{ node: null, output: 'orders', code: 'output_mismatch', message: difference }]);
    // Every attempt after the first was told what differed.
    expect(
      generationRequests()
        .slice(1)
        .every((body) => body.includes(difference.replaceAll('"', '\\"'))),
    ).toBe(true);

    const before = (await stack.http.get(base(pipelineId), { token })).body.version;
    const refused = await stack.http.post(`${generationUrl}/accept`, undefined, { token });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: 'generation_unverified',
      issues: [{ path: ['orders'], code: 'not_records', message: difference }],
    });
    expect(refused.body.message).toContain('{"force": true}');
    for (const body of [{ force: 'yes' }, { force: 1 }, { force: true, extra: 1 }]) {
      const bad = await stack.http.post(`${generationUrl}/accept`, body, { token });
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.code, JSON.stringify(body)).toBe('invalid_input');
    }
    for (const rawBody of ['[true]', '"force"', 'true']) {
      const bad = await stack.http.request('POST', `${generationUrl}/accept`, {
        rawBody,
        headers: { 'content-type': 'application/json' },
        as: { token },
      });
      expect(bad.status, rawBody).toBe(400);
      expect(bad.body.code, rawBody).toBe('invalid_input');
    }
    expect((await stack.http.post(`${generationUrl}/accept`, { force: false }, { token })).body.code).toBe('generation_unverified');
    // Nothing refused made a version.
    expect((await stack.http.get(base(pipelineId), { token })).body.version).toBe(before);

    const forced = await stack.http.post(`${generationUrl}/accept`, { force: true }, { token });
    expect(forced.status, forced.text).toBe(200);
    expect((await stack.http.get(base(pipelineId), { token })).body.version).toBe(forced.body.id);
    expect((await stack.http.get(generationUrl, { token })).body).toMatchObject({ status: 'accepted', acceptedVersion: forced.body.id });
  }, 240_000);

  it('a candidate that returns cookies shows its dry run to who may read them; other readers, the model and the log get no value', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
    const { analysisUrl } = await ordersAnalysis(pipelineId);
    model.received.length = 0;
    // The shop's sign-in sets `shop=ok`; a script returns it where the orders were declared.
    const cookieReader = {
      content: signedIn(
        { orders: { type: 'page.evaluate', inputs: { page: { $ref: 'go.page' }, script: 'return document.cookie' } } },
        { orders: { $ref: 'orders.result' } },
      ),
    };
    model.scripts.generation.push(cookieReader, cookieReader, cookieReader, cookieReader);
    const generationUrl = await generate(analysisUrl, 'scripted');
    const generation = await settledJob(stack, generationUrl, { token }, 150_000);
    expect(generation.error?.code).toBe('output_mismatch');
    // The owner may read the session's cookies: the dry run as it went.
    expect(generation.dryRun).toMatchObject({ status: 'succeeded', outputsWithheld: false, result: { orders: 'shop=ok' } });
    expect(generation.dryRun.mismatches[0].message).toContain('shop=ok');
    expect(generation.dryRun.screenshots.length).toBeGreaterThan(0);

    const reader = await createApiKey(stack, token, {
      accessType: 'custom',
      permissions: [`${slug}.pipelines.read`, `${slug}.sessions.read`],
    });
    const seen = await stack.http.get(generationUrl, { apiKey: reader.secret });
    expect(seen.status, seen.text).toBe(200);
    expect(seen.body.dryRun).toMatchObject({ status: 'succeeded', outputsWithheld: true, result: null, screenshots: [] });
    expect(seen.body.dryRun.mismatches).toEqual([{ output: 'orders', kind: 'not_records', message: expect.stringContaining('withheld') }]);
    expect(seen.text).not.toContain('shop=ok');
    const log = await stack.http.get(`${generationUrl}/logs`, { apiKey: reader.secret });
    expect(log.status).toBe(200);
    expect(log.text).not.toContain('shop=ok');
    // Nor did the model, told what differed for its next attempts, see the value.
    expect(generationRequests().length).toBeGreaterThan(1);
    for (const body of generationRequests()) expect(body).not.toContain('shop=ok');
  }, 240_000);

  it('a heading proposed for records is refused; a model that then finds no such records ends goal_not_found, naming what the pages showed', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
    model.received.length = 0;
    model.scripts.analysis.push(
      { toolCalls: [{ name: 'page_model', args: {} }] },
      (request) => {
        const [seen] = pageModelsIn(request);
        return {
          content: {
            goal: 'the invoices',
            startUrl: `${shop.url}/search?q=red`,
            steps: [
              { action: 'goto', url: `${shop.url}/search?q=red`, evidence: 'the page' },
              { action: 'extract_text', selector: seen?.headings[0]?.selector, output: 'invoices', evidence: 'the heading' },
            ],
            parameters: [],
            outputs: [{ name: 'invoices', description: 'the invoices' }],
            risks: [],
          },
        };
      },
      { content: { goalNotFound: 'The page has products, not invoices.' } },
    );
    const analysisUrl = await analyse(pipelineId, `Open ${shop.url}/search?q=red and read the invoices`, 'scripted');
    const analysis = await settledJob(stack, analysisUrl, { token });
    expect(analysis.output).toBeNull();
    expect(analysis.error.code).toBe('goal_not_found');
    expect(analysis.error.message).toMatch(/^The page has products, not invoices; the pages showed: /);
    expect(analysis.error.message).toContain('a search form (Search products)');
    expect(analysis.error.message).toMatch(/a list of 3 items \(title, price/);
    expect(model.received).toHaveLength(3);
    // The structured output it was asked for allows either answer.
    const schema = JSON.parse(model.received[0] as string).response_format.json_schema.schema;
    expect(schema.type).toBe('object');
    expect(schema.anyOf.map((branch: { required: string[] }) => branch.required)).toContainEqual(['goalNotFound']);
    expect(model.received[2]).toContain('extracts only a single value');
    expect(model.received[2]).toContain('goalNotFound');
    const accepted = await stack.http.post(`${analysisUrl}/accept`, { model: 'builtin' }, { token });
    expect(accepted.body.code).toBe('analysis_without_output');
  }, 120_000);
});

describe('secrets written any way, in the prompt or on the page', () => {
  it('never reach the stored job, its logs or the model; the words around them stay readable', async () => {
    const pageSecrets = [
      'sk-pageabcdefghijklmnopqrstu12345',
      'page-far-77',
      'ghp_pageabcdefghijklmnopqrstuvwxyz012345',
      'page-url-88',
      'page-input-99',
    ];
    const site = await startTestSite({
      '/account': (_req, res) => {
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.end(
          `<!doctype html><title>Account</title><h1 id="title">Account</h1>
          <dl><dt>API key</dt><dd>${pageSecrets[0]}</dd><dt>Recovery</dt><dd>the password for the admin account is ${pageSecrets[1]}</dd></dl>
          <p id="notes">Deploy token: ${pageSecrets[2]}. Mirror at https://deploy:${pageSecrets[3]}@git.example.test/repo</p>
          <form><label for="pw">Password</label><input id="pw" type="password" value="${pageSecrets[4]}"><button type="submit">Save</button></form>
          <a href="/forgot">Forgot password?</a>`,
        );
      },
    });
    try {
      const promptSecrets = [
        'p-colon-1',
        'p-single-2',
        'p-json-3',
        'p-far-4',
        'p-use-5',
        'p-key-6x',
        'p-bearer-7x',
        'p-url-8',
        'sk-promptabcdefghijklmnopqrst9',
      ];
      const prompt = [
        `Open ${site.url}/account and read the title.`,
        `For the record: password: ${promptSecrets[0]}, pwd '${promptSecrets[1]}', {"password": "${promptSecrets[2]}"},`,
        `the password for the admin account is ${promptSecrets[3]}, use ${promptSecrets[4]} as the password,`,
        `api_key=${promptSecrets[5]}, bearer ${promptSecrets[6]}, https://ada:${promptSecrets[7]}@example.test/ and token ${promptSecrets[8]}.`,
      ].join(' ');
      const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
      model.received.length = 0;
      model.scripts.analysis.push(
        {
          toolCalls: [
            { name: 'page_model', args: {} },
            { name: 'aria_snapshot', args: {} },
            { name: 'query_selector', args: { selector: '#notes' } },
          ],
        },
        {
          // A model that repeats what it saw: its answer is redacted as the page was.
          content: {
            goal: 'read the title',
            startUrl: `${site.url}/account`,
            steps: [
              { action: 'goto', url: `${site.url}/account`, evidence: 'the account page' },
              { action: 'extract_text', selector: '#title', output: 'title', evidence: 'the heading' },
            ],
            parameters: [],
            outputs: [{ name: 'title', description: 'the page title' }],
            risks: [`the page shows the deploy token ${pageSecrets[2]}, and the password for the admin account is ${pageSecrets[1]}`],
          },
        },
      );
      const analysisUrl = await analyse(pipelineId, prompt, 'scripted');
      const analysis = await settledJob(stack, analysisUrl, { token });
      expect(analysis.error).toBeNull();
      expect(analysis.output.steps.map((step: { action: string }) => step.action)).toEqual(['goto', 'extract_text']);
      expect(analysis.prompt).toContain("pwd '{{password");
      expect(analysis.prompt).toContain('https://ada:{{password');

      const row = await stack.orm.em
        .fork()
        .getConnection()
        .execute('select prompt, messages, values, output from analysis_jobs where id = ?', [analysis.id]);
      const places = {
        row: JSON.stringify(row),
        job: (await stack.http.get(analysisUrl, { token })).text,
        logs: (await stack.http.get(`${analysisUrl}/logs?limit=200`, { token })).text,
        model: model.received.join('\n'),
      };
      expect(model.received).toHaveLength(2);
      for (const [place, text] of Object.entries(places)) {
        for (const secret of [...promptSecrets, ...pageSecrets]) expect(text, `${place} holds ${secret}`).not.toContain(secret);
      }
      // What the page says about passwords stays readable: the model needs it.
      for (const text of [places.row, places.model]) {
        expect(text).toContain('Forgot password?');
        expect(text).toContain('the password for the admin account is [redacted]');
      }
      // The page was read: its text reached the model, without its secrets.
      expect(places.model).toContain('Deploy token: [redacted]');
    } finally {
      await site.close();
    }
  }, 120_000);
});
