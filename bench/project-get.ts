/**
 * `npm run bench:project-get`: requests per second and p99 latency of `GET /{project}/api` with
 * API-key auth, beside a bare Fastify answering a constant, 50 connections each, in one run; the
 * goal (the API route at GOAL_RATIO of the bare server's rate or better) printed beside it.
 * Writes the figures to docs/benchmarks/project-get.md.
 *
 * It brings up the real stack on its own: a scratch database on the local PostgreSQL
 * (BENCH_DATABASE_URL or TEST_DATABASE_URL, else postgres://root@127.0.0.1:5432), a Temporal dev
 * server, and the app listening on loopback. The load generator (autocannon) runs in a child
 * process so it does not share the server's event loop.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { initTRPC } from '@trpc/server';
import Fastify from 'fastify';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { z } from 'zod';
import { User } from '../db/entities/index.ts';
import { initORM, migrate } from '../db/orm.ts';
import { createScratchDatabase } from '../scripts/scratch-database.ts';
import { buildApp } from '../server/app.ts';
import { JwtSigner } from '../server/auth/jwt.ts';
import { ResourceTokens } from '../server/browsers/tokens/resourceTokens.ts';
import { parseConfig } from '../server/config.ts';
import { errorBody, restErrorBody } from '../server/errors.ts';
import { registerRestRoutes } from '../server/http/restRoutes.ts';
import { startDevTemporal } from '../server/infra/devTemporal.ts';
import { freePort } from '../server/infra/ports.ts';
import { connectTemporalClient } from '../server/infra/temporalClient.ts';
import { createLogger } from '../server/logger.ts';
import { projectView } from '../server/trpc/routers/projects.ts';

const CONNECTIONS = 50;
const DURATION_SECONDS = Number(process.env.BENCH_DURATION ?? 10);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP ?? 3);
/** Issue 14's goal: an authenticated GET at 0.3 of the bare server's requests per second or better. */
const GOAL_RATIO = 0.3;
const COMMAND = 'npm run bench:project-get';
const FIGURES_START = '<!-- figures: written by bench/project-get.ts -->';
const FIGURES_END = '<!-- /figures -->';

const require = createRequire(import.meta.url);
const autocannonCli = require.resolve('autocannon/autocannon.js');
const docsFile = path.join(import.meta.dirname, '..', 'docs', 'benchmarks', 'project-get.md');

type AutocannonSummary = {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
};

type Result = {
  name: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  total: number;
  errors: number;
  non2xx: number;
  /** CPU time of this process (both servers live in it; one is loaded at a time) per request, in µs. */
  cpuMicros: number;
};

/** One autocannon run in a child process; its JSON summary. */
function autocannon(url: string, seconds: number, headers: Record<string, string>) {
  const args = [autocannonCli, '-c', String(CONNECTIONS), '-d', String(seconds), '-j'];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}=${value}`);
  args.push(url);
  return new Promise<AutocannonSummary>((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.stderr.on('data', (chunk) => {
      err += chunk;
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited ${code}: ${err}`));
      try {
        resolve(JSON.parse(out));
      } catch {
        reject(new Error(`autocannon printed no JSON: ${out}${err}`));
      }
    });
  });
}

async function measure(name: string, url: string, headers: Record<string, string> = {}): Promise<Result> {
  process.stdout.write(`  ${name}: warming up ${WARMUP_SECONDS} s, measuring ${DURATION_SECONDS} s … `);
  await autocannon(url, WARMUP_SECONDS, headers);
  const cpuBefore = process.cpuUsage();
  const run = await autocannon(url, DURATION_SECONDS, headers);
  const cpu = process.cpuUsage(cpuBefore);
  const result = {
    name,
    requestsPerSecond: run.requests.average,
    p50: run.latency.p50,
    p99: run.latency.p99,
    total: run.requests.total,
    errors: run.errors + run.timeouts,
    non2xx: run.non2xx,
    cpuMicros: (cpu.user + cpu.system) / Math.max(1, run.requests.total),
  };
  console.log(`${Math.round(result.requestsPerSecond)} req/s, p99 ${result.p99} ms, ${Math.round(result.cpuMicros)} µs CPU a request`);
  if (result.errors || result.non2xx) console.warn(`  ${name}: ${result.errors} errors, ${result.non2xx} non-2xx answers`);
  return result;
}

async function json<T = Record<string, string>>(response: Response): Promise<T> {
  const body = (await response.json()) as T;
  if (!response.ok) throw new Error(`${response.status} ${JSON.stringify(body)}`);
  return body;
}

const log = createLogger({ logLevel: 'warn' });
const cleanups: (() => Promise<unknown>)[] = [];

try {
  console.log('bench: starting the stack (scratch database, Temporal dev server, app)');
  const database = await createScratchDatabase(process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL, 'bench');
  cleanups.push(database.drop);
  const temporalServer = await startDevTemporal({ cliPath: process.env.TEMPORAL_CLI_PATH, port: await freePort(), log });
  cleanups.push(temporalServer.stop);

  // Production settings; request logging off (warn), as a busy deployment would ship it elsewhere.
  const config = parseConfig({
    NODE_ENV: 'production',
    PORT: '0',
    DATABASE_URL: database.url,
    TEMPORAL_ADDRESS: temporalServer.address,
    JWT_SECRET: randomBytes(32).toString('hex'),
    // Required in production; never reached: no worker runs here to deliver the sign-up mail.
    SMTP_URL: 'smtp://127.0.0.1:25',
    LOG_LEVEL: 'warn',
  });
  const orm = await initORM(config.databaseUrl as string);
  cleanups.push(() => orm.close(true));
  await migrate(orm);
  const temporal = await connectTemporalClient(temporalServer.address, config.temporal.namespace);
  cleanups.push(temporal.close);
  const secret = config.jwtSecret as string;
  const app = await buildApp({
    config,
    orm,
    jwt: new JwtSigner(secret),
    serviceSecret: secret,
    resourceTokens: new ResourceTokens(secret),
    temporal: temporal.client,
    log,
  });
  // autocannon leaves with requests still queued on the server (their sockets closed, their
  // handlers running); they finish before the database closes.
  let inFlight = 0;
  // Callback hooks, as the app's own: an async hook would add a promise per request to the measure.
  app.addHook('onRequest', (_req, _reply, done) => {
    inFlight++;
    done();
  });
  app.addHook('onSend', (_req, _reply, _payload, done) => {
    inFlight--;
    done();
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  cleanups.push(async () => {
    for (let waited = 0; inFlight > 0 && waited < 30_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    await app.close();
  });
  const base = `http://127.0.0.1:${(app.server.address() as net.AddressInfo).port}`;

  // A verified user (the e-mail step done in the database), a project and a full API key.
  const email = `bench-${randomBytes(4).toString('hex')}@example.test`;
  const registered = await json<{ token: string }>(
    await fetch(`${base}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'bench password 1', firstName: 'Bench', lastName: 'Mark' }),
    }),
  );
  await orm.em.fork().nativeUpdate(User, { email }, { emailVerified: true });
  const session = { 'content-type': 'application/json', authorization: `Bearer ${registered.token}` };
  const slug = 'bench-project';
  await json(
    await fetch(`${base}/api/projects`, {
      method: 'PUT',
      headers: session,
      body: JSON.stringify({ name: 'Benchmark', description: 'GET /{project}/api', slug }),
    }),
  );
  const key = await json<{ secret: string }>(
    await fetch(`${base}/api/api-keys`, { method: 'PUT', headers: session, body: JSON.stringify({ name: 'bench', accessType: 'full' }) }),
  );
  const projectUrl = `${base}/${slug}/api`;
  const sample = await json<object>(await fetch(projectUrl, { headers: { 'x-api-key': key.secret } }));

  // The same Fastify, bare: no plugins, no logging, a constant of the same shape.
  const bare = Fastify({ logger: false });
  bare.get('/', async () => sample);
  await bare.listen({ port: 0, host: '127.0.0.1' });
  cleanups.push(() => bare.close());
  const bareUrl = `http://127.0.0.1:${(bare.server.address() as net.AddressInfo).port}/`;

  // What the REST routes cost by themselves: the same path, input and output schema through tRPC
  // and the app's own REST routes (server/http/restRoutes.ts) on a bare Fastify, a procedure
  // answering the constant (no hooks, no credential, no project). The API route cannot be faster.
  const t = initTRPC.meta<OpenApiMeta>().create();
  const adapterOnly = Fastify({ logger: false });
  registerRestRoutes(adapterOnly, {
    router: t.router({
      get: t.procedure
        .meta({ openapi: { method: 'GET', path: '/{project}/api' } })
        .input(z.strictObject({ project: z.string().max(100) }))
        .output(projectView)
        .query(() => sample as z.infer<typeof projectView>),
    }),
    createContext: () => ({}),
    errorBody: restErrorBody,
    routeErrorBody: (status, message) => errorBody(status === 405 ? 'method_not_allowed' : 'not_found', message),
  });
  await adapterOnly.listen({ port: 0, host: '127.0.0.1' });
  cleanups.push(() => adapterOnly.close());
  const adapterUrl = `http://127.0.0.1:${(adapterOnly.server.address() as net.AddressInfo).port}/${slug}/api`;

  console.log(`bench: ${CONNECTIONS} connections, autocannon in a child process`);
  const results = [
    await measure('bare Fastify, constant', bareUrl),
    await measure('tRPC + the REST routes, constant', adapterUrl),
    await measure('GET /{project}/api, x-api-key', projectUrl, { 'x-api-key': key.secret }),
  ];

  const cpus = os.cpus();
  const machine = `${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown CPU'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}`;
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const [bareResult, adapterResult, projectResult] = results as [Result, Result, Result];
  const ratio = projectResult.requestsPerSecond / bareResult.requestsPerSecond;
  const adapterRatio = adapterResult.requestsPerSecond / bareResult.requestsPerSecond;
  const verdict = ratio >= GOAL_RATIO ? 'met' : 'not met';
  const goalLine = `goal: GET /{project}/api at ≥ ${GOAL_RATIO}× bare Fastify; this run ${ratio.toFixed(3)}× (${Math.round(projectResult.requestsPerSecond)} against ${Math.round(bareResult.requestsPerSecond)} req/s): ${verdict}`;
  console.log(`bench: ${goalLine}`);
  console.log(`bench: the adapter alone (a constant through tRPC + the REST routes) ${adapterRatio.toFixed(3)}× bare Fastify`);
  const rows = results.map(
    (r) =>
      `| ${r.name} | ${Math.round(r.requestsPerSecond).toLocaleString('en-US')} | ${r.p50} | ${r.p99} | ${Math.round(r.cpuMicros)} | ${r.total.toLocaleString('en-US')} | ${r.errors + r.non2xx} |`,
  );
  // The figures between the markers are this run's; the rest of the page (the CPU profiles) is written by hand.
  const figures = `${FIGURES_START}
| target | requests/s | p50 ms | p99 ms | server CPU µs/request | requests | errors + non-2xx |
|---|---:|---:|---:|---:|---:|---:|
${rows.join('\n')}

The API route serves ${(ratio * 100).toFixed(1)} % of the bare server's rate; the goal is ${GOAL_RATIO * 100} % or more (${verdict}).
The REST routes alone (server/http/restRoutes.ts), answering the same constant through tRPC with
the route's input and output schemas and nothing else, serve ${(adapterRatio * 100).toFixed(1)} %.

- Date: ${date}
- Machine: ${machine}; Node ${process.version}; PostgreSQL on the same machine
- Load: autocannon, ${CONNECTIONS} connections, ${DURATION_SECONDS} s per target after a ${WARMUP_SECONDS} s warm-up, all targets in
  the same run, the load generator in its own process on the same 2 cores
- Reproduce: \`${COMMAND}\` (needs the local PostgreSQL and the \`temporal\` CLI, as the tests do;
  \`BENCH_DURATION=30\` for longer runs)
${FIGURES_END}`;
  const page = existsSync(docsFile)
    ? readFileSync(docsFile, 'utf8')
    : `# \`GET /{project}/api\` with an API key\n\n${FIGURES_START}\n${FIGURES_END}\n`;
  const from = page.indexOf(FIGURES_START);
  const to = page.indexOf(FIGURES_END);
  writeFileSync(
    docsFile,
    from >= 0 && to > from ? page.slice(0, from) + figures + page.slice(to + FIGURES_END.length) : `${page}\n${figures}\n`,
  );
  // The linter formats Markdown too (aligned table columns); leave the file as it wants it.
  spawnSync(process.execPath, [require.resolve('@biomejs/biome/bin/biome'), 'format', '--write', docsFile], { stdio: 'ignore' });
  console.log(`bench: wrote ${path.relative(process.cwd(), docsFile)}`);
} catch (error) {
  console.error('bench failed:', error);
  process.exitCode = 1;
} finally {
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup();
    } catch (error) {
      console.warn('cleanup:', (error as Error).message);
    }
  }
}
