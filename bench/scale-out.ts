/**
 * `npm run bench:scale-out`: browser hosts as their own processes, each on a loopback address of
 * its own and reached only through its relay, serving one api. 16 clients at once, each in a loop
 * for BENCH_SECONDS (60): `POST …/sessions/{id}/start` → `connectOverCDP` through remoteUrl
 * ("usable") → goto a local page → read its heading → disconnect → `POST …/stop`. The same loop
 * with one host, then with two, in one run. Prints and writes docs/benchmarks/scale-out.md:
 * sessions per minute and start → usable (p50, p99) for each.
 *
 * Settings (environment): BENCH_SECONDS (60), BENCH_CLIENTS (16), BENCH_HOST_CAPACITY
 * (BROWSERS_PER_HOST of each host, 16: one host can hold every client).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium } from 'playwright-core';
import { BrowserHost, SessionResource } from '../db/entities/index.ts';
import { BENCH_PAGE_HOST, machineLine, percentile, startBenchStack } from './support/stack.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 16);
const HOST_CAPACITY = Number(process.env.BENCH_HOST_CAPACITY ?? 16);
/** Each host on an address of its own, apart from the api's 127.0.0.1 and the page server's. */
const HOSTS = [
  { id: 'bench-host-a', address: '127.0.0.2' },
  { id: 'bench-host-b', address: '127.0.0.3' },
];

const site = http.createServer((_req, res) => {
  res.setHeader('content-type', 'text/html');
  res.end('<!doctype html><html><head><title>shop</title></head><body><h1>Fruit</h1><ul><li>apple</li><li>pear</li></ul></body></html>');
});
await new Promise<void>((resolve) => site.listen(0, BENCH_PAGE_HOST, resolve));
const siteUrl = `http://${BENCH_PAGE_HOST}:${(site.address() as { port: number }).port}/`;

console.log('bench: starting the stack (scratch database, Temporal dev server, api and control worker; hosts as processes)');
const stack = await startBenchStack({ BROWSERS_PER_PROJECT: String(CLIENTS) }, { browserHost: false });
const hosts: ChildProcess[] = [];

/** A browser host as production runs it (server/main/browserHost.ts), on its own address. */
function startHost(host: (typeof HOSTS)[number]) {
  const child = spawn(process.execPath, ['server/main/browserHost.ts'], {
    cwd: path.join(import.meta.dirname, '..'),
    env: {
      ...process.env,
      NODE_ENV: 'test',
      DATABASE_URL: stack.config.databaseUrl,
      TEMPORAL_ADDRESS: stack.config.temporal.address,
      JWT_SECRET: stack.config.jwtSecret,
      BROWSER_HOST_ID: host.id,
      BROWSER_HOST_ADDRESS: host.address,
      BROWSERS_PER_HOST: String(HOST_CAPACITY),
      DATA_DIR: mkdtempSync(path.join(os.tmpdir(), `bf-bench-${host.id}-`)),
      BROWSER_ALLOWED_PRIVATE_DESTINATIONS: BENCH_PAGE_HOST,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  hosts.push(child);
  return child;
}

async function waitForHosts(ids: string[]) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const rows = await stack.orm.em.fork().find(BrowserHost, { id: { $in: ids }, heartbeatAt: { $gt: new Date(Date.now() - 10_000) } });
    if (rows.length === ids.length) return;
    await sleep(250);
  }
  throw new Error(`browser hosts ${ids.join(', ')} did not come up within 60 s`);
}

type Phase = {
  label: string;
  hostCount: number;
  usable: number[];
  sessions: number;
  refused: number;
  failed: number;
  seconds: number;
  perHost: Map<string, number>;
};

/** CLIENTS clients in a loop for SECONDS, each on a session of its own. */
async function runPhase(label: string, hostCount: number, sessionIds: string[]): Promise<Phase> {
  const phase: Phase = { label, hostCount, usable: [], sessions: 0, refused: 0, failed: 0, seconds: SECONDS, perHost: new Map() };
  const until = Date.now() + SECONDS * 1000;
  const started = Date.now();
  await Promise.all(
    sessionIds.map(async (sessionId) => {
      while (Date.now() < until) {
        const t0 = performance.now();
        let resource: { id: string; remoteUrl: string; host?: string | null };
        try {
          resource = await stack.call('POST', `/${stack.slug}/api/sessions/${sessionId}/start`, stack.token);
        } catch (error) {
          // Every host full, or a limit met while another client's browser is still stopping.
          phase.refused++;
          if (!/→ (429|503)/.test(String(error))) console.warn(`bench: start failed: ${String(error).slice(0, 200)}`);
          await sleep(200);
          continue;
        }
        try {
          const browser = await chromium.connectOverCDP(resource.remoteUrl);
          phase.usable.push(performance.now() - t0);
          const context = browser.contexts()[0] ?? (await browser.newContext());
          const page = context.pages()[0] ?? (await context.newPage());
          await page.goto(siteUrl);
          if ((await page.textContent('h1')) !== 'Fruit') throw new Error('the page did not load');
          await browser.close();
          phase.sessions++;
        } catch (error) {
          phase.failed++;
          console.warn(`bench: a session failed: ${String(error).slice(0, 200)}`);
        } finally {
          const row = await stack.orm.em.fork().findOne(SessionResource, { id: resource.id }, { fields: ['hostId'] });
          if (row?.hostId) phase.perHost.set(row.hostId, (phase.perHost.get(row.hostId) ?? 0) + 1);
          await stack.call('POST', `/${stack.slug}/api/sessions/${sessionId}/${resource.id}/stop`, stack.token).catch(() => {});
        }
      }
    }),
  );
  phase.seconds = (Date.now() - started) / 1000;
  return phase;
}

/** Waits until no browser of the project is starting, running or stopping: the next phase starts clean. */
async function settle() {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const busy = await stack.orm.em.fork().count(SessionResource, { status: { $in: ['starting', 'running', 'stopping'] } });
    if (!busy) return;
    await sleep(250);
  }
}

try {
  const sessionIds: string[] = [];
  for (let i = 0; i < CLIENTS; i++) {
    sessionIds.push((await stack.call('PUT', `/${stack.slug}/api/sessions`, stack.token, { name: `client ${i}` })).id);
  }
  const [first, second] = HOSTS as [(typeof HOSTS)[number], (typeof HOSTS)[number]];
  startHost(first);
  await waitForHosts([first.id]);
  console.log(`bench: one host, ${CLIENTS} clients for ${SECONDS} s`);
  const one = await runPhase('one host', 1, sessionIds);
  await settle();
  startHost(second);
  await waitForHosts([first.id, second.id]);
  console.log(`bench: two hosts, ${CLIENTS} clients for ${SECONDS} s`);
  const two = await runPhase('two hosts', 2, sessionIds);

  const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(0) : '-');
  const row = (phase: Phase) =>
    `| ${phase.label} | ${(phase.sessions / (phase.seconds / 60)).toFixed(1)} | ${phase.sessions} | ${ms(percentile(phase.usable, 50))} | ${ms(percentile(phase.usable, 99))} | ${phase.refused} | ${phase.failed} | ${[
      ...phase.perHost,
    ]
      .map(([id, n]) => `${id}: ${n}`)
      .join(', ')} |`;
  const report = `# Benchmark: scale-out over two browser hosts

Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}.

Reproduce: \`npm run bench:scale-out\` (BENCH_SECONDS, BENCH_CLIENTS, BENCH_HOST_CAPACITY).

Browser hosts run as their own processes (\`server/main/browserHost.ts\`), each on a loopback
address of its own (127.0.0.2, 127.0.0.3; the api on 127.0.0.1), reached only through their relays
(docs/browsers.md, Browser hosts and their relay), with the default warm pool and ${HOST_CAPACITY}
browsers each. ${CLIENTS} clients at once, each in a loop for ${SECONDS} s on a session of its own:
\`POST …/sessions/{id}/start\` → Playwright's \`connectOverCDP\` through the answer's \`remoteUrl\`
("usable") → goto a local page → read its heading → disconnect → \`POST …/stop\`. First with one host,
then with a second one started, in the same run. A start refused (every host full, the project's
limit met while a stopped browser is still being torn down) is retried after 200 ms and counted.

| hosts | sessions per minute | sessions | start → usable p50 ms | p99 ms | starts refused | sessions failed | sessions per host |
|---|---|---|---|---|---|---|---|
${row(one)}
${row(two)}

All processes (api, control worker, both hosts, Temporal's dev server, PostgreSQL, every Chromium
and the clients) share this machine's cores: a second host adds a warm pool and a worker, not
cores. On machines of their own, each host brings its own.
`;
  const dir = path.join(import.meta.dirname, '..', 'docs', 'benchmarks');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'scale-out.md'), report);
  console.log(report);
} finally {
  for (const host of hosts) host.kill('SIGTERM');
  await Promise.all(hosts.map((host) => new Promise((resolve) => (host.exitCode !== null ? resolve(null) : host.once('exit', resolve)))));
  await stack.stop();
  site.close();
}
