import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowIds } from '../../workflows/contracts/workflowIds.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import { PAGE_HOST } from '../support/pages.ts';
import { createPipeline, settledRun, startRun } from '../support/pipelines.ts';
import { stopAndWait } from '../support/resources.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { RECEIVER_HOST, startWebhookReceiver } from '../support/webhookReceivers.ts';

/**
 * Quotas per account (docs/quotas.md): no tenant takes the whole machine. An account holds a
 * bounded number of projects and runs a bounded number of browsers across them; a project holds a
 * bounded number of webhook endpoints, and past its deliveries in flight later ones wait their
 * turn instead of being tried all at once, and none is lost.
 */

const PROJECTS = 2;
const BROWSERS_PER_PROJECT = 2;
const BROWSERS_PER_ACCOUNT = 3;
const ENDPOINTS = 2;
const IN_FLIGHT = 2;

let stack: TestStack;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  stack = await startTestStack(
    {
      BROWSER_ALLOWED_PRIVATE_DESTINATIONS: `${PAGE_HOST},${RECEIVER_HOST}`,
      PROJECTS_PER_ACCOUNT: String(PROJECTS),
      BROWSERS_PER_PROJECT: String(BROWSERS_PER_PROJECT),
      BROWSERS_PER_ACCOUNT: String(BROWSERS_PER_ACCOUNT),
      WEBHOOK_ENDPOINTS_PER_PROJECT: String(ENDPOINTS),
      WEBHOOK_DELIVERIES_IN_FLIGHT_PER_PROJECT: String(IN_FLIGHT),
      // A try every second or two for about a minute: an endpoint that is down keeps its delivery in flight.
      WEBHOOK_RETRY_INITIAL_SECONDS: '1',
      WEBHOOK_RETRY_MAX_INTERVAL_SECONDS: '2',
      WEBHOOK_RETRY_HOURS: '0.02',
      WEBHOOK_TIMEOUT_SECONDS: '2',
    },
    { browserHost: true },
  );
}, 120_000);
afterAll(async () => {
  await stack?.close();
  await receiver?.close();
});

function newProject(token: string, slug: string) {
  return stack.http.put('/api/projects', { name: slug, description: '', slug, public: false }, { token });
}

/**
 * Writes a delivery row as the service would, `created` that long ago (an interval); `inFlight`
 * marks it given its place at `created` (no workflow is started for it: one that is gone).
 * Answers its id and message id.
 */
async function writeDelivery(
  projectId: string,
  endpointId: string,
  ago: string,
  inFlight?: { attempts: number; nextAttemptIn: string | null },
) {
  const id = randomUUID();
  const messageId = `msg_${id.replaceAll('-', '')}`;
  const payload = { type: 'run.finished', timestamp: new Date().toISOString(), data: { project: projectId } };
  const attempts = Array.from({ length: inFlight?.attempts ?? 0 }, () => ({
    at: new Date().toISOString(),
    statusCode: 500,
    error: null,
    durationMs: 1,
  }));
  await stack.orm.em.getConnection().execute(
    `insert into webhook_deliveries (id, project_id, endpoint_id, message_id, event_key, event, payload, status, attempts,
       dispatched_at, next_attempt_at, created, updated)
     values (?, ?, ?, ?, ?, 'run.finished', ?, 'pending', ?, ${inFlight ? `now() - interval '${ago}'` : 'null'},
       ${inFlight?.nextAttemptIn ? `now() + interval '${inFlight.nextAttemptIn}'` : 'null'}, now() - interval '${ago}', now() - interval '${ago}')`,
    [id, projectId, endpointId, messageId, `run.finished:${id}`, JSON.stringify(payload), JSON.stringify(attempts)],
  );
  return { id, messageId };
}

/** A housekeeping pass runs as its workflow starts: start it anew, as a control worker would. */
async function housekeepingPass() {
  const workflowId = workflowIds.housekeeping(stack.config.temporal.taskQueue);
  await stack.temporal.workflow.getHandle(workflowId).terminate('test: run a pass now');
  await stack.temporal.workflow.start('housekeepingWorkflow', {
    taskQueue: stack.config.temporal.taskQueue,
    workflowId,
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}

describe('projects per account', () => {
  it('an account at its project quota cannot create another, and can again after deleting one', async () => {
    const { token } = await registerUser(stack);
    const kept = await createProject(stack, token);
    const doomed = await createProject(stack, token);
    const suffix = Date.now().toString(36);

    const refused = await newProject(token, `over-${suffix}`);
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body).toEqual({
      status: 'error',
      code: 'project_limit_reached',
      message: expect.stringContaining(`${PROJECTS} projects`),
    });
    // Nothing was made of it.
    expect((await stack.http.get(`/over-${suffix}/api`, { token })).status).toBe(404);

    // Another account is not counted against it.
    const other = await registerUser(stack);
    expect((await newProject(other.token, `other-${suffix}`)).status).toBe(200);

    expect((await stack.http.delete(`/${doomed.slug}/api`, { token })).status).toBe(200);
    const again = await newProject(token, `again-${suffix}`);
    expect(again.status, again.text).toBe(200);
    const mine = await stack.http.get('/api/projects?my=true', { token });
    expect(mine.body.map((project: { slug: string }) => project.slug).sort()).toEqual([kept.slug, `again-${suffix}`].sort());
  });

  it('two creates at once cannot both take an account’s last place', async () => {
    const { token } = await registerUser(stack);
    await createProject(stack, token);
    const suffix = Date.now().toString(36);
    const answers = await Promise.all([newProject(token, `race-a-${suffix}`), newProject(token, `race-b-${suffix}`)]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    expect((await stack.http.get('/api/projects?my=true', { token })).body).toHaveLength(PROJECTS);
  });
});

describe('browsers per account', () => {
  it('an account’s browsers across two projects stop at the account’s bound, for sessions and runs alike', async () => {
    const { token } = await registerUser(stack);
    const projects = [await createProject(stack, token), await createProject(stack, token)];
    const sessions: string[] = [];
    for (const project of projects) {
      const created = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'quota' }, { token });
      expect(created.status, created.text).toBe(200);
      sessions.push(created.body.id);
    }
    const start = (index: number) =>
      stack.http.post(`/${projects[index]?.slug}/api/sessions/${sessions[index]}/start`, undefined, { token });
    const running: string[] = [];
    // Two in the first project (its own limit), one in the second: the account's three.
    for (const index of [0, 0, 1]) {
      const started = await start(index);
      expect(started.status, started.text).toBe(200);
      running.push(`/${projects[index]?.slug}/api/sessions/${sessions[index]}/${started.body.id}`);
    }

    // The second project runs one of its two: the account's bound refuses the next.
    const refused = await start(1);
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body).toEqual({
      status: 'error',
      code: 'account_browser_limit_reached',
      message: expect.stringContaining(`${BROWSERS_PER_ACCOUNT} browsers`),
    });
    // A run on a session with no running browser that needs one of its own (it records) is refused
    // the same way; a call (docs/browsers.md, Contexts for calls) takes no browser of the count.
    const idle = await stack.http.put(`/${projects[1]?.slug}/api/sessions`, { name: 'idle' }, { token });
    const pipelineId = await createPipeline(
      stack,
      projects[1]?.slug as string,
      { token },
      {
        nodes: { hello: { type: 'text.template', inputs: { template: 'hello' } } },
      },
    );
    const run = await stack.http.post(
      `/${projects[1]?.slug}/api/pipelines/${pipelineId}/start`,
      { session: idle.body.id, record: true },
      { token },
    );
    expect(run.status, run.text).toBe(429);
    expect(run.body.code).toBe('account_browser_limit_reached');
    const call = await stack.http.post(`/${projects[1]?.slug}/api/pipelines/${pipelineId}/start`, { session: idle.body.id }, { token });
    expect(call.status, call.text).toBe(200);

    // Another account's browsers are its own.
    const other = await registerUser(stack);
    const theirs = await createProject(stack, other.token);
    const theirSession = await stack.http.put(`/${theirs.slug}/api/sessions`, { name: 'theirs' }, { token: other.token });
    const theirStart = await stack.http.post(`/${theirs.slug}/api/sessions/${theirSession.body.id}/start`, undefined, {
      token: other.token,
    });
    expect(theirStart.status, theirStart.text).toBe(200);

    // One stopped in the first project frees a place for the second.
    await stopAndWait(stack.http, running.shift() as string, { token });
    const after = await start(1);
    expect(after.status, after.text).toBe(200);
    running.push(`/${projects[1]?.slug}/api/sessions/${sessions[1]}/${after.body.id}`);

    for (const resource of [...running, `/${theirs.slug}/api/sessions/${theirSession.body.id}/${theirStart.body.id}`]) {
      const token_ = resource.startsWith(`/${theirs.slug}/`) ? other.token : token;
      await stack.http.post(`${resource}/stop`, undefined, { token: token_ });
    }
  }, 120_000);
});

describe('webhooks per project', () => {
  it('a project at its webhook endpoint quota is refused another, and takes one again after a delete', async () => {
    const { token } = await registerUser(stack);
    const { slug } = await createProject(stack, token);
    const add = (path: string) =>
      stack.http.post(`/${slug}/api/webhooks`, { url: receiver.url(path), events: ['run.finished'] }, { token });
    const ids: string[] = [];
    for (let index = 0; index < ENDPOINTS; index++) {
      const added = await add(`/quota-${index}`);
      expect(added.status, added.text).toBe(200);
      ids.push(added.body.id);
    }
    const refused = await add('/quota-over');
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body).toEqual({
      status: 'error',
      code: 'webhook_endpoint_limit_reached',
      message: expect.stringContaining(`${ENDPOINTS} webhook endpoints`),
    });
    const listed = await stack.http.get(`/${slug}/api/webhooks`, { token });
    expect(listed.body).toHaveLength(ENDPOINTS);

    expect((await stack.http.delete(`/${slug}/api/webhooks/${ids[0]}`, { token })).status).toBe(200);
    const again = await add('/quota-again');
    expect(again.status, again.text).toBe(200);
  });

  it('deliveries past the in-flight bound wait their turn, in order, and none is lost; an endpoint that is down holds up no other', async () => {
    const { token } = await registerUser(stack);
    const { slug } = await createProject(stack, token);
    const session = await stack.http.put(`/${slug}/api/sessions`, { name: 'hooks' }, { token });
    const add = async (path: string) => {
      const added = await stack.http.post(`/${slug}/api/webhooks`, { url: receiver.url(path), events: ['run.finished'] }, { token });
      expect(added.status, added.text).toBe(200);
      return added.body.id as string;
    };
    // `/down` answers 500 until the test brings it back.
    receiver.answer(
      '/down',
      Array.from({ length: 1000 }, () => 500),
    );
    const down = await add('/down');
    const up = await add('/up');
    const deliveries = async (webhookId: string) =>
      (await stack.http.get(`/${slug}/api/webhooks/${webhookId}/deliveries`, { token })).body as {
        status: string;
        queued: boolean;
        messageId: string;
        created: string;
      }[];

    const pipelineId = await createPipeline(
      stack,
      slug,
      { token },
      {
        nodes: { hello: { type: 'text.template', inputs: { template: 'hello' } } },
      },
    );
    const RUNS = 3;
    for (let index = 0; index < RUNS; index++) {
      const { runUrl } = await startRun(stack, slug, { token }, pipelineId, session.body.id);
      expect((await settledRun(stack, runUrl, { token })).status.pipeline).toBe('succeeded');
    }

    // The healthy endpoint got all three while the other is down: its half of the places is its own.
    await expect.poll(async () => (await deliveries(up)).filter((d) => d.status === 'succeeded').length, { timeout: 30_000 }).toBe(RUNS);
    // The endpoint that is down holds one place (half of two): one delivery tried, the others queued.
    const waiting = await deliveries(down);
    expect(waiting).toHaveLength(RUNS);
    expect(waiting.every((d) => d.status === 'pending')).toBe(true);
    expect(waiting.filter((d) => d.queued)).toHaveLength(RUNS - 1);
    const tried = new Set(receiver.at('/down').map((request) => request.headers['webhook-id']));
    expect(tried.size).toBe(1);

    // Back up: the one in flight succeeds at its next try, and the queued ones follow, oldest first.
    receiver.answer('/down', []);
    await expect
      .poll(async () => (await deliveries(down)).filter((d) => d.status === 'succeeded').length, { timeout: 45_000, interval: 500 })
      .toBe(RUNS);
    const byAge = (await deliveries(down)).sort((a, b) => a.created.localeCompare(b.created)).map((d) => d.messageId);
    const arrivals = receiver.at('/down').map((request) => request.headers['webhook-id']);
    // Each message arrived only after the one before it was done: never two at once.
    const firstArrivals = arrivals.filter((id, index) => arrivals.indexOf(id) === index);
    expect(firstArrivals).toEqual(byAge);
    const lastOf = (id: string | undefined) => arrivals.lastIndexOf(id as string);
    const firstOf = (id: string | undefined) => arrivals.indexOf(id as string);
    expect(lastOf(byAge[0])).toBeLessThan(firstOf(byAge[1]));
    expect(lastOf(byAge[1])).toBeLessThan(firstOf(byAge[2]));
  }, 180_000);

  it('a queued delivery that no dispatch reached is given its place by housekeeping, and never deleted while it waits', async () => {
    const { token } = await registerUser(stack);
    const { id: projectId, slug } = await createProject(stack, token);
    const added = await stack.http.post(`/${slug}/api/webhooks`, { url: receiver.url('/backstop'), events: ['run.finished'] }, { token });
    expect(added.status, added.text).toBe(200);
    // Written, then its dispatch lost (the process died in between), and older than the log's 30 days.
    const { id: deliveryId, messageId } = await writeDelivery(projectId, added.body.id, '40 days');
    const read = () => stack.http.get(`/${slug}/api/webhooks/${added.body.id}/deliveries/${deliveryId}`, { token });
    expect((await read()).body).toMatchObject({ status: 'pending', queued: true });

    await housekeepingPass();
    await expect.poll(async () => (await read()).body.status, { timeout: 30_000, interval: 300 }).toBe('succeeded');
    expect(receiver.at('/backstop').map((request) => request.headers['webhook-id'])).toEqual([messageId]);
  }, 60_000);

  it('a long backlog of an endpoint that is down does not keep a healthy endpoint of the project waiting', async () => {
    const { token } = await registerUser(stack);
    const { id: projectId, slug } = await createProject(stack, token);
    const session = await stack.http.put(`/${slug}/api/sessions`, { name: 'backlog' }, { token });
    const add = async (path: string) => {
      const added = await stack.http.post(`/${slug}/api/webhooks`, { url: receiver.url(path), events: ['run.finished'] }, { token });
      expect(added.status, added.text).toBe(200);
      return added.body.id as string;
    };
    receiver.answer(
      '/backlog-down',
      Array.from({ length: 1000 }, () => 500),
    );
    const down = await add('/backlog-down');
    const up = await add('/backlog-up');
    // Queued for the endpoint that is down, all older than anything the healthy one gets: far more
    // than a dispatch would look at if it read only the project's oldest rows.
    for (let index = 0; index < 30 * IN_FLIGHT; index++) await writeDelivery(projectId, down, '1 minute');

    const pipelineId = await createPipeline(
      stack,
      slug,
      { token },
      { nodes: { hello: { type: 'text.template', inputs: { template: 'hello' } } } },
    );
    const { runUrl } = await startRun(stack, slug, { token }, pipelineId, session.body.id);
    expect((await settledRun(stack, runUrl, { token })).status.pipeline).toBe('succeeded');

    const deliveries = async (webhookId: string) =>
      (await stack.http.get(`/${slug}/api/webhooks/${webhookId}/deliveries`, { token })).body as { status: string }[];
    await expect.poll(async () => (await deliveries(up)).map((d) => d.status), { timeout: 20_000, interval: 300 }).toEqual(['succeeded']);
    // The one that is down holds its half of the places, no more.
    const [held] = await stack.orm.em
      .getConnection()
      .execute(
        `select count(*)::int as n from webhook_deliveries where endpoint_id = ? and status = 'pending' and dispatched_at is not null`,
        [down],
      );
    expect(held?.n).toBe(1);
    // Its backlog goes with it: nothing keeps trying it after the test.
    expect((await stack.http.delete(`/${slug}/api/webhooks/${down}`, { token })).status).toBe(200);
  }, 60_000);

  it('deliveries in flight that no workflow works on any more are failed by housekeeping, and the queued ones take their places', async () => {
    const { token } = await registerUser(stack);
    const { id: projectId, slug } = await createProject(stack, token);
    const added = await stack.http.post(`/${slug}/api/webhooks`, { url: receiver.url('/abandoned'), events: ['run.finished'] }, { token });
    expect(added.status, added.text).toBe(200);
    const endpointId = added.body.id as string;
    // Tried once, its next try 20 minutes overdue, and no workflow (terminated, or Temporal's history lost).
    const orphaned = await writeDelivery(projectId, endpointId, '30 minutes', { attempts: 1, nextAttemptIn: '-20 minutes' });
    // Pending from before the bound, 40 days old and never tried since: past any retry period.
    const ancient = await writeDelivery(projectId, endpointId, '40 days', { attempts: 0, nextAttemptIn: null });
    // Queued behind them: the endpoint's one place (half of two) is theirs until they are settled.
    const queued = await writeDelivery(projectId, endpointId, '10 minutes');
    const read = (id: string) => stack.http.get(`/${slug}/api/webhooks/${endpointId}/deliveries/${id}`, { token });
    expect((await read(queued.id)).body).toMatchObject({ status: 'pending', queued: true });

    await housekeepingPass();
    await expect.poll(async () => (await read(queued.id)).body.status, { timeout: 30_000, interval: 300 }).toBe('succeeded');
    expect((await read(orphaned.id)).body).toMatchObject({
      status: 'failed',
      queued: false,
      failure: expect.stringContaining('workflow ended without settling it'),
    });
    // Settled, then past the log's 30 days: deleted like any old delivery.
    expect((await read(ancient.id)).status).toBe(404);
    expect(receiver.at('/abandoned').map((request) => request.headers['webhook-id'])).toEqual([queued.messageId]);
  }, 60_000);
});
