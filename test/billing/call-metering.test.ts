import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession, PipelineRun, Project, SessionResource, UsageRecord } from '../../db/entities/index.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import { startTestSite } from '../support/pages.ts';
import { longWaitSource } from '../support/pipelines.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { type StripeStandIn, startStripeStandIn } from '../support/stripeStandIn.ts';

/**
 * Calls run in contexts of their project's browser, which has no resource and no workflow
 * (docs/browsers.md, Contexts for calls): its host meters it (server/browsers/host/callMetering.ts).
 * A function execute's browser CPU and network become usage records of its project, and when the
 * funds run out the project's browser for calls is closed and its next call is refused (402).
 */

const WEBHOOK_SECRET = 'whsec_test_secret_for_the_stand_in';
const COORDINATOR_TOKEN = 'coordinator-token-for-the-call-tests';

let stack: TestStack;
let stripe: StripeStandIn;
let site: Awaited<ReturnType<typeof startTestSite>>;

beforeAll(async () => {
  stripe = await startStripeStandIn({ webhookSecret: WEBHOOK_SECRET });
  site = await startTestSite();
  stack = await startTestStack(
    { STRIPE_SECRET_KEY: 'sk_test_standin', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_BASE: stripe.url, COORDINATOR_TOKEN },
    { browserHost: true },
  );
  stripe.sendWebhooksTo(`${stack.url}/api/stripe/webhook`);
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await stripe?.close();
  await site?.close();
});

type User = Awaited<ReturnType<typeof registerUser>>;

async function topUp(user: User, amount: string) {
  const checkout = await stack.http.post('/api/billing/top-up', { amount, currency: 'usd' }, { token: user.token });
  expect(checkout.status, checkout.text).toBe(200);
  const { delivery } = await stripe.complete(stripe.sessionOfUrl(checkout.body.url));
  expect(delivery).toEqual({ status: 200, body: { received: true } });
}

async function createFunction(slug: string, as: { token: string }, fnSlug: string, source: Record<string, unknown>, outputs: unknown[]) {
  const created = await stack.http.put(
    `/${slug}/api/functions`,
    { name: fnSlug, description: '', slug: fnSlug, definition: { source, parameters: [], outputs } },
    as,
  );
  expect(created.status, created.text).toBe(200);
}

const projectBrowsersOf = (projectId: string) =>
  (stack.browserHost?.projectBrowsers.status() ?? []).filter((browser) => browser.projectId === projectId);

/** The project's usage records of `unit` whose resource is no session resource (the calls' browsers'). */
async function callUsage(projectId: string, unit: 'cpu' | 'network') {
  const em = stack.orm.em.fork();
  const records = await em.find(UsageRecord, { project: projectId, unit });
  const resources = await em.find(SessionResource, { id: { $in: records.map((record) => record.resourceId) } });
  const known = new Set(resources.map((resource) => resource.id));
  return records.filter((record) => !known.has(record.resourceId));
}

describe('calls are metered', () => {
  it('a function execute’s browser CPU and network become usage records of its project, each report once', async () => {
    const user = await registerUser(stack);
    const as = { token: user.token };
    const project = await createProject(stack, user.token);
    await topUp(user, '5');
    await createFunction(
      project.slug,
      as,
      'heading',
      {
        nodes: {
          page: { type: 'browser.page' },
          open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: site.url } },
          heading: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: 'h1' } },
        },
        outputs: { heading: { $ref: 'heading.text' } },
      },
      [{ name: 'heading', refType: 'string' }],
    );
    const answer = await stack.http.post(`/${project.slug}/api/functions/slug/heading/execute`, {}, as);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.outputs).toEqual({ heading: 'Hello from the test site' });
    // A call: no browser resource of its own.
    const run = await stack.orm.em.fork().findOneOrFail(PipelineRun, { id: answer.body.identifier });
    expect(run.resource).toBeNull();
    expect(projectBrowsersOf(project.id)).toHaveLength(1);

    // Reported within a check interval or two: a launch and a page load take CPU, and the page's bytes.
    await expect.poll(async () => (await callUsage(project.id, 'cpu')).length, { timeout: 20_000 }).toBeGreaterThan(0);
    await expect.poll(async () => (await callUsage(project.id, 'network')).length, { timeout: 20_000 }).toBeGreaterThan(0);
    const cpu = await callUsage(project.id, 'cpu');
    const network = await callUsage(project.id, 'network');
    expect(cpu.reduce((sum, record) => sum + Number(record.amount), 0)).toBeGreaterThan(0);
    expect(network.reduce((sum, record) => sum + Number(record.amount), 0)).toBeGreaterThan(0);
    // One browser, one id; each report keyed by the total it brought, so none was recorded twice.
    expect(new Set([...cpu, ...network].map((record) => record.resourceId)).size).toBe(1);
    expect([...cpu, ...network].every((record) => record.reportId?.startsWith(`calls:${record.resourceId}:`))).toBe(true);
    // The money came off the balance, and the usage listing takes the call's records.
    const usage = await stack.http.get('/api/billing/usage', as);
    expect(usage.status, usage.text).toBe(200);
    expect(usage.body.sessions).toEqual([expect.objectContaining({ project: project.slug, session: null, of: 'calls' })]);
    const overview = await stack.http.get('/api/billing/overview', as);
    expect(overview.status, overview.text).toBe(200);
  }, 120_000);

  it('when the funds run out the project’s browser for calls is closed, and its next call is refused 402', async () => {
    const user = await registerUser(stack);
    const as = { token: user.token };
    const project = await createProject(stack, user.token);
    await topUp(user, '0.05');
    await createFunction(project.slug, as, 'waits', longWaitSource(40_000), []);
    const executing = stack.http.post(`/${project.slug}/api/functions/slug/waits/execute`, {}, as);
    await expect.poll(() => projectBrowsersOf(project.id)[0]?.contexts ?? 0, { timeout: 30_000 }).toBe(1);

    // The funds run out (another workload's report: 5,000 CPU seconds, more than the 5 cents there are).
    const session = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'metered' }, as);
    expect(session.status, session.text).toBe(200);
    const em = stack.orm.em.fork();
    const resource = em.create(SessionResource, {
      session: em.getReference(BrowserSession, session.body.id),
      project: em.getReference(Project, project.id),
      status: 'stopped',
    });
    await em.flush();
    const exhausted = await stack.http.post(`/api/coordinator/${COORDINATOR_TOKEN}/usage`, {
      resourceId: resource.id,
      amount: 5000,
      unit: 'cpu',
    });
    expect(exhausted.body).toEqual({ action: 'shutdown' });

    // The call's browser is metered again (it still uses CPU), is answered shutdown and is closed.
    await expect.poll(() => projectBrowsersOf(project.id).length, { timeout: 30_000 }).toBe(0);
    const ended = await executing;
    expect(ended.status, ended.text).not.toBe(200);

    const refused = await stack.http.post(`/${project.slug}/api/functions/slug/waits/execute`, {}, as);
    expect(refused.status, refused.text).toBe(402);
    expect(refused.body).toMatchObject({ status: 'error', code: 'insufficient_funds' });
    expect(projectBrowsersOf(project.id)).toHaveLength(0);
  }, 120_000);
});
