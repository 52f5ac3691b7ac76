/**
 * `npm run bench:billing`: coordinator usage reports per second with their latency (50 concurrent
 * reporters over 10 accounts, each report a transaction that locks its account, prices, draws and
 * writes the ledger), and the time from the report that exhausts an account's funds until that
 * account's browser processes are gone. Writes docs/benchmarks/billing.md.
 *
 * Money comes in as Stripe would send it: a `checkout.session.completed` event signed with the
 * webhook secret (the SDK's own test signature), posted to the real webhook. Stripe's API itself
 * is never called here.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Stripe from 'stripe';
import { BillingAccount, BrowserSession, Project, SessionResource, User } from '../db/entities/index.ts';
import { isAlive } from '../server/browsers/host/chromium/processes.ts';
import { machineLine, percentile, startBenchStack } from './support/stack.ts';

const REPORTERS = Number(process.env.BENCH_REPORTERS ?? 50);
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 10);
const REPORTS_PER_REPORTER = Number(process.env.BENCH_REPORTS ?? 200);
const SHUTDOWN_RUNS = Number(process.env.BENCH_SHUTDOWN_RUNS ?? 20);
const WEBHOOK_SECRET = 'whsec_bench';
const COORDINATOR_TOKEN = randomBytes(16).toString('hex');

console.log('bench: starting the stack (billing on, scratch database, Temporal dev server, api, worker, browser host)');
const stack = await startBenchStack({
  STRIPE_SECRET_KEY: 'sk_test_bench',
  STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
  // Never reached: nothing here opens a checkout.
  STRIPE_API_BASE: 'http://127.0.0.1:9',
  COORDINATOR_TOKEN,
  BROWSERS_PER_HOST: '8',
});

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${stack.base}${url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`POST ${url} → ${response.status}: ${text}`);
  return JSON.parse(text);
}

/** Credits `minor` cents to the user, as a paid top-up checkout's webhook does. */
async function credit(userId: string, minor: number) {
  const event = {
    id: `evt_${randomUUID()}`,
    object: 'event',
    type: 'checkout.session.completed',
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: `cs_${randomUUID()}`,
        object: 'checkout.session',
        mode: 'payment',
        payment_status: 'paid',
        amount_total: minor,
        currency: 'usd',
        client_reference_id: userId,
        metadata: { userId },
      },
    },
  };
  const payload = JSON.stringify(event);
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET, timestamp: Math.floor(Date.now() / 1000) });
  await post('/api/stripe/webhook', payload, { 'stripe-signature': signature });
}

/** A verified user with a project, a session, and a resource row to report usage against. */
async function account() {
  const email = `bench-${randomBytes(4).toString('hex')}@example.test`;
  const { token } = await post('/api/auth/register', { email, password: 'bench password 1', firstName: 'Bench', lastName: 'Mark' });
  const em = stack.orm.em.fork();
  await em.nativeUpdate(User, { email }, { emailVerified: true });
  const user = await em.findOneOrFail(User, { email });
  const slug = `b-${randomBytes(4).toString('hex')}`;
  await stack.call('PUT', '/api/projects', token, { name: 'Bench', slug });
  const session = await stack.call('PUT', `/${slug}/api/sessions`, token, { name: 'bench' });
  const project = await em.findOneOrFail(Project, { slug });
  const resource = em.create(SessionResource, {
    session: em.getReference(BrowserSession, session.id),
    project,
    status: 'stopped',
  });
  await em.flush();
  return { userId: user.id, token, slug, sessionId: session.id as string, resourceId: resource.id };
}

const report = (body: Record<string, unknown>) => post(`/api/coordinator/${COORDINATOR_TOKEN}/usage`, body);

try {
  // --- Throughput: 50 reporters over 10 accounts ------------------------------------------------
  const accounts: Awaited<ReturnType<typeof account>>[] = [];
  for (let i = 0; i < ACCOUNTS; i++) accounts.push(await account());
  for (const { userId } of accounts) await credit(userId, 100_000_000);
  // Warm-up: connections, plans, JIT.
  await Promise.all(accounts.map(({ resourceId }) => report({ resourceId, amount: 1, unit: 'tokens' })));

  console.log(`bench: ${REPORTERS} reporters × ${REPORTS_PER_REPORTER} reports over ${ACCOUNTS} accounts`);
  const latencies: number[] = [];
  let shutdowns = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: REPORTERS }, async (_, reporter) => {
      const { resourceId } = accounts[reporter % ACCOUNTS] as (typeof accounts)[number];
      for (let i = 0; i < REPORTS_PER_REPORTER; i++) {
        const t0 = performance.now();
        const answer = await report({ resourceId, amount: 250, unit: 'tokens', reportId: `${reporter}-${i}-${randomUUID()}` });
        latencies.push(performance.now() - t0);
        if (answer.action !== 'continue') shutdowns++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const perSecond = latencies.length / seconds;

  // --- Exhaustion → browser processes gone ---------------------------------------------------
  console.log(`bench: ${SHUTDOWN_RUNS} exhaustions of an account with a running browser`);
  const owner = await account();
  const shutdown: number[] = [];
  for (let run = 0; run < SHUTDOWN_RUNS; run++) {
    // Five cents available: the credit first settles what the last round left pending.
    const pending = (await stack.orm.em.fork().findOne(BillingAccount, { user: owner.userId }))?.pending ?? 0n;
    await credit(owner.userId, 5 + Number(pending));
    const browser = await stack.call('POST', `/${owner.slug}/api/sessions/${owner.sessionId}/start`, owner.token);
    const row = await stack.orm.em.fork().findOneOrFail(SessionResource, { id: browser.id });
    const pid = row.pid;
    if (!pid || !isAlive(pid)) throw new Error('the browser has no live process to watch');
    const t0 = performance.now();
    // 5,000 CPU seconds at 0.0014 a second: 7 cents, more than the 5 there are.
    const answer = await report({ resourceId: browser.id, amount: 5000, unit: 'cpu' });
    if (answer.action !== 'shutdown') throw new Error(`expected shutdown, got ${answer.action}`);
    while (isAlive(pid)) {
      if (performance.now() - t0 > 60_000) throw new Error('the browser outlived its funds by a minute');
      await sleep(5);
    }
    shutdown.push(performance.now() - t0);
    // The row settles just after the process is gone; the next start needs the project's slot.
    while ((await stack.orm.em.fork().findOneOrFail(SessionResource, { id: browser.id })).status !== 'stopped') await sleep(20);
  }

  const ms = (value: number) => value.toFixed(1);
  const result = `# Benchmark: billing and metering

Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; PostgreSQL on the same machine.

Reproduce: \`npm run bench:billing\` (BENCH_REPORTERS, BENCH_ACCOUNTS, BENCH_REPORTS, BENCH_SHUTDOWN_RUNS
change the counts).

## Coordinator usage reports

${REPORTERS} concurrent reporters over ${ACCOUNTS} accounts (reporter *i* reports for account *i* mod
${ACCOUNTS}), ${REPORTS_PER_REPORTER} reports each, each \`POST /api/coordinator/<token>/usage\` with its
own report id. Each report is one transaction: the account row locked, the usage priced, drawn from the
pool and the balance, the usage record and the ledger entry written. Reports of one account queue on
its lock; accounts proceed side by side.

| measure | value |
|---|---|
| reports | ${latencies.length} |
| reports per second | ${perSecond.toFixed(0)} |
| latency median ms | ${ms(percentile(latencies, 50))} |
| latency p95 ms | ${ms(percentile(latencies, 95))} |
| latency p99 ms | ${ms(percentile(latencies, 99))} |
| answers other than continue | ${shutdowns} |

## From the exhausting report to the browser's processes gone

An account holding 5 cents runs one browser (${SHUTDOWN_RUNS} rounds, each after a fresh 5-cent
credit). A report of 5,000 CPU seconds (7 cents) exhausts it; the clock runs from sending that report
until the browser's process no longer exists. In between: the report answers \`shutdown\` and starts
the account's shutdown workflow, whose activity signals the browser's workflow, which has its host
stop Chromium.

| measure | rounds | median ms | p95 ms |
|---|---|---|---|
| report → browser process gone | ${shutdown.length} | ${ms(percentile(shutdown, 50))} | ${ms(percentile(shutdown, 95))} |
`;
  const dir = path.join(import.meta.dirname, '..', 'docs', 'benchmarks');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'billing.md'), result);
  console.log(result);
} finally {
  await stack.stop();
}
