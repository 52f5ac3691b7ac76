import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import { ownAddress, ownAddressHex, ownAddressSpellings } from '../support/ownAddress.ts';
import { PAGE_HOST, startTestSite } from '../support/pages.ts';
import { createPipeline, settledRun, startRun } from '../support/pipelines.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { RECEIVER_HOST, startDnsServer, startWebhookReceiver } from '../support/webhookReceivers.ts';

/**
 * A user adds a webhook endpoint to a project and hears of its events: signed as Standard
 * Webhooks says, retried with backoff, resent on request, and never sent where the egress policy
 * forbids, even when a name's DNS answer changes after the endpoint was made.
 */

let stack: TestStack;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let dns: Awaited<ReturnType<typeof startDnsServer>>;
let token: string;
let slug: string;
let sessionId: string;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  dns = await startDnsServer();
  stack = await startTestStack(
    {
      BROWSER_ALLOWED_PRIVATE_DESTINATIONS: `${PAGE_HOST},${RECEIVER_HOST}`,
      WEBHOOK_DNS_SERVER: dns.server,
      // Tries 1 s apart, then 2 s, for about 10 s in all: a failing endpoint gives up in a test's time.
      WEBHOOK_RETRY_INITIAL_SECONDS: '1',
      WEBHOOK_RETRY_MAX_INTERVAL_SECONDS: '2',
      WEBHOOK_RETRY_HOURS: '0.003',
      WEBHOOK_TIMEOUT_SECONDS: '2',
    },
    { browserHost: true },
  );
  token = (await registerUser(stack)).token;
  slug = (await createProject(stack, token)).slug;
  const session = await stack.http.put(`/${slug}/api/sessions`, { name: 'hooks' }, { token });
  expect(session.status, session.text).toBe(200);
  sessionId = session.body.id;
}, 120_000);
afterAll(async () => {
  await stack?.close();
  await receiver?.close();
  await dns?.close();
});

const hooks = () => `/${slug}/api/webhooks`;

async function addEndpoint(url: string, events: string[] = ['run.finished']) {
  const created = await stack.http.post(hooks(), { url, events, description: 'test receiver' }, { token });
  expect(created.status, created.text).toBe(200);
  return created.body as { id: string; secret: string; url: string };
}

/** A run of a pipeline with one data node; answers its id once it has ended. */
async function finishedRun() {
  const pipelineId = await createPipeline(
    stack,
    slug,
    { token },
    {
      nodes: { hello: { type: 'text.template', inputs: { template: 'hello' } } },
      outputs: { text: { $ref: 'hello.text' } },
    },
  );
  const { runId, runUrl } = await startRun(stack, slug, { token }, pipelineId, sessionId);
  const run = await settledRun(stack, runUrl, { token });
  expect(run.status.pipeline).toBe('succeeded');
  return { runId, pipelineId };
}

async function deliveries(webhookId: string) {
  const listed = await stack.http.get(`${hooks()}/${webhookId}/deliveries`, { token });
  expect(listed.status, listed.text).toBe(200);
  return listed.body as {
    id: string;
    status: string;
    messageId: string;
    event: string;
    attempts: { statusCode: number | null; error: string | null; durationMs: number }[];
    nextAttemptAt: string | null;
    failure: string | null;
    resentFrom: string | null;
    payload: { data: Record<string, unknown> };
  }[];
}

/** The deliveries of `webhookId` once none is pending. */
async function settledDeliveries(webhookId: string, count = 1) {
  await expect
    .poll(async () => (await deliveries(webhookId)).filter((delivery) => delivery.status !== 'pending').length, { timeout: 30_000 })
    .toBeGreaterThanOrEqual(count);
  return deliveries(webhookId);
}

type Verified = { type: string; data: Record<string, Record<string, unknown>> };

/** The first request `path` received once it has come, verified with `secret` as a receiver would. */
async function verifiedAt(path: string, secret: string, timeout = 30_000): Promise<Verified> {
  await expect.poll(() => receiver.at(path).length, { timeout }).toBeGreaterThanOrEqual(1);
  const request = receiver.at(path)[0];
  return new Webhook(secret).verify(request?.body ?? '', request?.headers ?? {}) as Verified;
}

describe('a webhook endpoint', () => {
  it('receives a run’s end, signed so that the Standard Webhooks library verifies it', async () => {
    const endpoint = await addEndpoint(receiver.url('/runs'));
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    // The secret is shown once.
    const got = await stack.http.get(`${hooks()}/${endpoint.id}`, { token });
    expect(got.status).toBe(200);
    expect(got.text).not.toContain(endpoint.secret);
    expect(got.body).toMatchObject({ url: endpoint.url, events: ['run.finished'], enabled: true });

    const { runId, pipelineId } = await finishedRun();
    const payload = await verifiedAt('/runs', endpoint.secret);
    expect(receiver.at('/runs')).toHaveLength(1);
    const request = receiver.at('/runs')[0];
    expect(payload.type).toBe('run.finished');
    expect(payload.data.run).toMatchObject({ id: runId, pipeline: pipelineId, status: 'succeeded', evaluation: 'completed', error: null });
    // Thin: no outputs, and the URL to read them with a key.
    expect(request?.body).not.toContain('hello');
    const read = await stack.http.get(new URL(payload.data.run?.url as string).pathname, { token });
    expect(read.status, read.text).toBe(200);
    expect(read.body.result).toEqual({ text: 'hello' });
    // Another secret does not verify it.
    const other = (await addEndpoint(receiver.url('/unused'))).secret;
    expect(() => new Webhook(other).verify(request?.body ?? '', request?.headers ?? {})).toThrow();

    const [delivery] = await settledDeliveries(endpoint.id);
    expect(delivery).toMatchObject({ status: 'succeeded', event: 'run.finished', nextAttemptAt: null, failure: null });
    expect(delivery?.messageId).toBe(request?.headers['webhook-id']);
    expect(delivery?.attempts).toEqual([expect.objectContaining({ statusCode: 200, error: null })]);
  }, 90_000);

  it('is tried again with backoff when it fails, and the log shows each try and the next', async () => {
    receiver.answer('/flaky', [500, 503]);
    const endpoint = await addEndpoint(receiver.url('/flaky'));
    await finishedRun();
    // Between tries the delivery says when the next one is due.
    await expect.poll(async () => (await deliveries(endpoint.id))[0]?.nextAttemptAt ?? null, { timeout: 30_000 }).not.toBeNull();
    const [delivery] = await settledDeliveries(endpoint.id);
    expect(delivery?.status).toBe('succeeded');
    expect(delivery?.attempts.map((attempt) => attempt.statusCode)).toEqual([500, 503, 200]);
    // One message, three tries: the same webhook-id each time, so the receiver can tell.
    const ids = new Set(receiver.at('/flaky').map((request) => request.headers['webhook-id']));
    expect(ids.size).toBe(1);
  }, 90_000);

  it('gives up after the retry period, and a resend delivers the same message again', async () => {
    receiver.answer('/down', [500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500]);
    const endpoint = await addEndpoint(receiver.url('/down'));
    await finishedRun();
    const [failed] = await settledDeliveries(endpoint.id);
    expect(failed?.status).toBe('failed');
    expect(failed?.failure).toMatch(/no success after \d+ tries: answered 500/);
    expect(failed?.attempts.length).toBeGreaterThanOrEqual(3);
    expect(failed?.nextAttemptAt).toBeNull();

    receiver.answer('/down', []);
    const resent = await stack.http.post(`${hooks()}/${endpoint.id}/deliveries/${failed?.id}/resend`, {}, { token });
    expect(resent.status, resent.text).toBe(200);
    expect(resent.body).toMatchObject({ resentFrom: failed?.id, messageId: failed?.messageId, queued: false });
    // The answer is the new delivery as it stands once given its place: a quick receiver may have had it already.
    expect(['pending', 'succeeded']).toContain(resent.body.status);
    await expect
      .poll(async () => (await stack.http.get(`${hooks()}/${endpoint.id}/deliveries/${resent.body.id}`, { token })).body.status, {
        timeout: 30_000,
      })
      .toBe('succeeded');
    expect(receiver.at('/down').at(-1)?.headers['webhook-id']).toBe(failed?.messageId);
  }, 90_000);

  it('cuts an answer that drips in past the timeout, and tries again', async () => {
    receiver.answer('/drip', ['drip']);
    const endpoint = await addEndpoint(receiver.url('/drip'));
    await finishedRun();
    const [delivery] = await settledDeliveries(endpoint.id);
    expect(delivery?.status).toBe('succeeded');
    expect(delivery?.attempts[0]).toMatchObject({ statusCode: null, error: 'no whole answer within 2 s' });
    expect(delivery?.attempts[0]?.durationMs).toBeLessThan(4_000);
    expect(delivery?.attempts[1]).toMatchObject({ statusCode: 200, error: null });
  }, 90_000);

  it('does not follow a redirect', async () => {
    receiver.answer('/moved', [302, 302, 302, 302, 302, 302, 302, 302, 302, 302, 302, 302]);
    const endpoint = await addEndpoint(receiver.url('/moved'));
    await finishedRun();
    const [delivery] = await settledDeliveries(endpoint.id);
    expect(delivery?.status).toBe('failed');
    expect(delivery?.attempts[0]).toMatchObject({ statusCode: 302, error: expect.stringMatching(/redirects are not followed/) });
    expect(receiver.at('/elsewhere')).toEqual([]);
  }, 90_000);

  it('hears a function’s end as function.finished, not run.finished', async () => {
    const functions = await addEndpoint(receiver.url('/functions'), ['function.finished']);
    const created = await stack.http.put(
      `/${slug}/api/functions`,
      {
        name: 'Greeter',
        slug: 'greeter',
        definition: {
          source: { nodes: { hello: { type: 'text.template', inputs: { template: 'hi' } } }, outputs: { text: { $ref: 'hello.text' } } },
          parameters: [],
          outputs: [{ name: 'text', refType: 'string' }],
          outputType: 'function',
        },
      },
      { token },
    );
    expect(created.status, created.text).toBe(200);
    const executed = await stack.http.post(`/${slug}/api/functions/slug/greeter/execute`, { args: {} }, { token });
    expect(executed.status, executed.text).toBe(200);
    const payload = await verifiedAt('/functions', functions.secret);
    expect(payload).toMatchObject({
      type: 'function.finished',
      data: { run: { status: 'succeeded', functionVersion: created.body.version, function: created.body.id } },
    });
    const read = await stack.http.get(new URL(payload.data.run?.url as string).pathname, { token });
    expect(read.status, read.text).toBe(200);
    expect(read.body.outputs).toEqual({ text: 'hi' });
    // The run.finished endpoints made above heard nothing of it.
    expect(receiver.at('/runs').map((hit) => JSON.parse(hit.body).data.run.id)).not.toContain(payload.data.run?.id);
  }, 90_000);

  it('hears an analysis end', async () => {
    const analyses = await addEndpoint(receiver.url('/analyses'), ['analysis.finished']);
    const site = await startTestSite();
    try {
      const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
      const started = await stack.http.put(
        `/${slug}/api/pipelines/${pipelineId}/analysis`,
        { session: sessionId, model: 'builtin', prompt: `Open ${site.url} and extract the heading` },
        { token },
      );
      expect(started.status, started.text).toBe(200);
      const payload = await verifiedAt('/analyses', analyses.secret, 60_000);
      expect(payload).toMatchObject({ type: 'analysis.finished', data: { analysis: { id: started.body.id, pipeline: pipelineId } } });
      const job = await stack.http.get(`/${slug}/api/analysis/${started.body.id}`, { token });
      expect(job.body.agent).toBe('stopped');
    } finally {
      await site.close();
    }
  }, 90_000);

  it('hears when a session’s browser stops', async () => {
    const endpoint = await addEndpoint(receiver.url('/sessions'), ['session.stopped']);
    const started = await stack.http.post(`/${slug}/api/sessions/${sessionId}/start`, undefined, { token });
    expect(started.status, started.text).toBe(200);
    const stopped = await stack.http.post(`/${slug}/api/sessions/${sessionId}/${started.body.id}/stop`, undefined, { token });
    expect(stopped.status, stopped.text).toBe(200);
    const payload = await verifiedAt('/sessions', endpoint.secret);
    expect(payload).toMatchObject({
      type: 'session.stopped',
      data: { session: { id: sessionId, resource: started.body.id, status: 'stopped' } },
    });
  }, 90_000);
});

describe('where a webhook may go', () => {
  it.each([
    ['loopback', 'http://127.0.0.1:3000/hook'],
    ['loopback by name', 'http://localhost:3000/hook'],
    ['IPv6 loopback', 'http://[::1]:3000/hook'],
    ['a private network', 'http://10.1.2.3/hook'],
    ['the cloud metadata address', 'http://169.254.169.254/latest/meta-data'],
    ['IPv4 in IPv6', 'http://[::ffff:127.0.0.1]/hook'],
  ])('refuses %s when the endpoint is made', async (_what, url) => {
    const created = await stack.http.post(hooks(), { url, events: ['run.finished'] }, { token });
    expect(created.status, created.text).toBe(400);
    expect(created.body.code).toBe('bad_url');
    expect(created.body.message).toMatch(/not an allowed destination|could not be resolved/);
  });

  it.each([
    ['not a URL', 'hook'],
    ['another scheme', 'ftp://example.com/hook'],
    ['credentials in the URL', 'https://user:pass@example.com/hook'],
  ])('refuses %s with a plain message', async (_what, url) => {
    const created = await stack.http.post(hooks(), { url, events: ['run.finished'] }, { token });
    expect(created.status, created.text).toBe(400);
    expect(created.body.code).toBe('invalid_input');
    expect(created.body.message).toMatch(/url: the URL/);
    expect(created.body.message).not.toContain('pass@');
  });

  it('refuses unknown events and an empty list', async () => {
    for (const events of [['run.done'], []]) {
      const created = await stack.http.post(hooks(), { url: receiver.url('/x'), events }, { token });
      expect(created.status, created.text).toBe(400);
      expect(created.body.code).toBe('invalid_input');
    }
  });

  it('refuses a name whose DNS answer turned to loopback after the endpoint was made, at delivery', async () => {
    const loopback = await startWebhookReceiver('127.0.0.1', receiver.port).catch(() => null);
    dns.records.set('hooks.example.test', RECEIVER_HOST);
    const endpoint = await addEndpoint(`http://hooks.example.test:${receiver.port}/rebound`);
    // Now the name points at the service's own loopback.
    dns.records.set('hooks.example.test', '127.0.0.1');
    await finishedRun();
    const [delivery] = await settledDeliveries(endpoint.id);
    expect(delivery?.status).toBe('failed');
    expect(delivery?.attempts[0]?.statusCode).toBeNull();
    expect(delivery?.attempts[0]?.error).toMatch(
      /refused: hooks\.example\.test is not an allowed destination: 127\.0\.0\.1 is an address of this machine/,
    );
    expect(receiver.at('/rebound')).toEqual([]);
    if (loopback) {
      expect(loopback.received).toEqual([]);
      await loopback.close();
    }
    // The same check refuses the new answer at creation too.
    const again = await stack.http.post(hooks(), { url: endpoint.url, events: ['run.finished'] }, { token });
    expect(again.status, again.text).toBe(400);
  }, 90_000);
});

describe('the machine’s own addresses and translated ones', () => {
  /** A project where nothing ever happens: an endpoint made there by mistake is never called. */
  let quiet: string;
  beforeAll(async () => {
    quiet = (await createProject(stack, token)).slug;
  });

  async function refusedAtCreation(url: string, reason: RegExp) {
    const created = await stack.http.post(`/${quiet}/api/webhooks`, { url, events: ['run.finished'] }, { token });
    if (created.status === 200) await stack.http.delete(`/${quiet}/api/webhooks/${created.body.id}`, { token });
    expect(created.status, created.text).toBe(400);
    expect(created.body.code).toBe('bad_url');
    expect(created.body.message).toMatch(reason);
  }

  it.each([
    ...ownAddressSpellings.map((host) => `http://${host}:3000/hook`),
    'http://[::ffff:7f00:1]:3000/hook',
    'http://0x7f.0.0.1:3000/hook',
    'http://127.1:3000/hook',
    'http://[::1]:3000/hook',
  ])('refuses %s, an address of this machine, when the endpoint is made', async (url) => {
    await refusedAtCreation(url, /is an address of this machine/);
  });

  // Refused before any lookup or connection: these are never dialled, even by a broken check.
  it.each([
    ['NAT64 of the metadata service', 'http://[64:ff9b::a9fe:a9fe]/hook', /NAT64 \(RFC 6052\) of 169\.254\.169\.254/],
    ['NAT64 of this machine', `http://[64:ff9b::${ownAddress}]/hook`, /NAT64/],
    ['local-use NAT64', 'http://[64:ff9b:1::a9fe:a9fe]/hook', /NAT64/],
    ['6to4 of this machine', `http://[2002:${ownAddressHex}::1]/hook`, /6to4 \(RFC 3056\)/],
    ['Teredo', 'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook', /Teredo \(RFC 4380\)/],
    ['IPv4-compatible', 'http://[::127.0.0.1]/hook', /IPv4-compatible/],
    ['SIIT', 'http://[::ffff:0:127.0.0.1]/hook', /SIIT/],
    ['documentation (TEST-NET-2)', 'http://198.51.100.7/hook', /not a globally routable address \(documentation/],
    ['documentation (TEST-NET-3)', 'http://203.0.113.9/hook', /not a globally routable address \(documentation/],
    ['IPv6 documentation', 'http://[2001:db8::1]/hook', /not a globally routable address \(documentation/],
    ['benchmarking', 'http://198.18.0.1/hook', /not a globally routable address \(benchmarking/],
  ])('refuses %s when the endpoint is made', async (_what, url, reason) => {
    await refusedAtCreation(url, reason);
  });

  it('refuses a name whose AAAA answer turned to this machine, IPv4-mapped, at delivery', async () => {
    // Where a delivery let through would land: this machine's own address, on the receiver's port.
    const ownReceiver = await startWebhookReceiver(ownAddress, receiver.port);
    dns.records.set('own.example.test', RECEIVER_HOST);
    try {
      const endpoint = await addEndpoint(`http://own.example.test:${receiver.port}/own`);
      dns.records.set('own.example.test', `::ffff:${ownAddressHex}`);
      await finishedRun();
      const [delivery] = await settledDeliveries(endpoint.id);
      expect(delivery?.status).toBe('failed');
      expect(delivery?.attempts[0]?.statusCode).toBeNull();
      expect(delivery?.attempts[0]?.error).toMatch(
        new RegExp(
          `::ffff:${ownAddressHex} is ${ownAddress.replaceAll('.', '\\.')} \\(IPv4-mapped IPv6\\), and .* is an address of this machine`,
        ),
      );
      expect(ownReceiver.received).toEqual([]);
      expect(receiver.at('/own')).toEqual([]);
    } finally {
      await ownReceiver.close();
    }
  }, 90_000);
});

describe('who may manage webhooks', () => {
  it('webhooks.read lists and reads; webhooks.write is needed to add, change, delete and resend', async () => {
    const endpoint = await addEndpoint(receiver.url('/keys'));
    const reader = await createApiKey(stack, token, { accessType: 'custom', permissions: [`${slug}.webhooks.read`] });
    const writer = await createApiKey(stack, token, {
      accessType: 'custom',
      permissions: [`${slug}.webhooks.read`, `${slug}.webhooks.write`],
    });
    const stranger = await createApiKey(stack, token, { accessType: 'custom', permissions: [`${slug}.pipelines.read`] });
    const asReader = { apiKey: reader.secret };
    const asWriter = { apiKey: writer.secret };

    const listed = await stack.http.get(hooks(), asReader);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.map((hook: { id: string }) => hook.id)).toContain(endpoint.id);
    expect(listed.text).not.toContain('whsec_');
    expect((await stack.http.get(`${hooks()}/${endpoint.id}/deliveries`, asReader)).status).toBe(200);
    expect((await stack.http.post(hooks(), { url: receiver.url('/r'), events: ['run.finished'] }, asReader)).status).toBe(403);
    expect((await stack.http.patch(`${hooks()}/${endpoint.id}`, { enabled: false }, asReader)).status).toBe(403);
    expect((await stack.http.get(hooks(), { apiKey: stranger.secret })).body).toEqual([]);
    expect((await stack.http.get(`${hooks()}/${endpoint.id}`, { apiKey: stranger.secret })).status).toBe(403);

    const changed = await stack.http.patch(
      `${hooks()}/${endpoint.id}`,
      { events: ['session.stopped', 'funds.low'], enabled: false },
      asWriter,
    );
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({ events: ['session.stopped', 'funds.low'], enabled: false });
    const refused = await stack.http.patch(`${hooks()}/${endpoint.id}`, { url: 'http://127.0.0.1/x' }, asWriter);
    expect(refused.status, refused.text).toBe(400);
    expect((await stack.http.delete(`${hooks()}/${endpoint.id}`, asWriter)).status).toBe(200);
    expect((await stack.http.get(`${hooks()}/${endpoint.id}`, { token })).status).toBe(404);
  });

  it('another project’s endpoint is not found', async () => {
    const endpoint = await addEndpoint(receiver.url('/mine'));
    const other = await createProject(stack, token);
    expect((await stack.http.get(`/${other.slug}/api/webhooks/${endpoint.id}`, { token })).status).toBe(404);
  });
});
