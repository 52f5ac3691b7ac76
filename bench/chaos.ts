/**
 * `npm run bench:chaos`: `npm start` on its embedded defaults, kept busy with pipeline runs and
 * browser sessions, while faults are injected at random every 20–40 s (issue 25):
 *
 * - kill -9 of a Chromium (a browser's main process);
 * - kill -9 of the Temporal dev server (the service restarts it);
 * - kill -9 of the embedded PostgreSQL (the service restarts it);
 * - SIGSTOP of the service's process for 15 s, then SIGCONT;
 * - kill -9 of the whole service, and `npm start` again;
 * - SIGSTOP of the embedded PostgreSQL (its postmaster and backends) for 15 s, then SIGCONT (hung,
 *   not gone: a stalled disk, a partition);
 * - SIGSTOP of the Temporal dev server for 15 s, then SIGCONT.
 *
 * While a dependency hangs, a read, a run start and `GET /api/health` are sent and timed: each
 * should be answered within a few seconds (503 with Retry-After), not held. The first faults are
 * each kind once, in a random order; the rest are drawn at random.
 *
 * It reports the runs started, succeeded, failed with a true cause (a fault while the run was
 * under way), failed falsely (no fault in its time), and lost (never ended); the browsers and
 * processes left behind; and the longest time from a fault until every run it caught had ended.
 * Writes the figures into docs/benchmarks/chaos.md (between the markers).
 *
 * BENCH_CHAOS_SECONDS (600) how long faults are injected, BENCH_CHAOS_RUNS (4) runs kept under way,
 * BENCH_CHAOS_SEED to replay a fault sequence.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { processTree, readProcessTable } from '../server/browsers/host/chromium/processes.ts';
import { sharedDataDirOf } from '../server/config.ts';
import { freePort } from '../server/infra/ports.ts';
import { HttpClient } from '../test/support/http.ts';
import { startTestSite } from '../test/support/pages.ts';
import { embeddedDefaultsEnv, groupAlive, processesMentioning, spawnService } from '../test/support/processes.ts';
import { writeFiguresBlock } from './support/figuresBlock.ts';
import { machineLine } from './support/stack.ts';

const SECONDS = Number(process.env.BENCH_CHAOS_SECONDS ?? 600);
const RUNS_UNDER_WAY = Number(process.env.BENCH_CHAOS_RUNS ?? 4);
const SESSIONS = 3;
const FAULT_EVERY_S = [20, 40] as const;
const STOPPED_FOR_MS = 15_000;
/** How long a probe sent while a dependency hangs may go unanswered before it counts as held. */
const PROBE_GIVE_UP_MS = 30_000;
/** How long after the last fault every run may take to end before it counts as lost. */
const SETTLE_WITHIN_MS = 300_000;
const READY_WITHIN_MS = 240_000;
const docsFile = path.join(import.meta.dirname, '..', 'docs', 'benchmarks', 'chaos.md');

/** A small deterministic generator, so a seed replays the same fault sequence. */
let seed = Number(process.env.BENCH_CHAOS_SEED ?? Date.now() % 100_000);
const firstSeed = seed;
function random() {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function cmdline(pid: number) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

function comm(pid: number) {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

// ---------------------------------------------------------------------------------------------
// The service

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bf-chaos-'));
// As root PostgreSQL runs as `postgres`, which must be able to enter DATA_DIR.
chmodSync(dataDir, 0o755);
const port = await freePort();
const env = await embeddedDefaultsEnv(dataDir, port);
const http = new HttpClient(`http://127.0.0.1:${port}`);
let service = spawnService('npm', ['start', '--silent'], env);
let earlierOutput = '';
const output = () => earlierOutput + service.output();

async function ready(within = READY_WITHIN_MS) {
  const deadline = Date.now() + within;
  while (Date.now() < deadline) {
    if (service.child.exitCode !== null) throw new Error(`npm start exited:\n${service.output().slice(-4000)}`);
    const answer = await fetch(`${http.baseUrl}/api`).catch(() => undefined);
    if (answer?.ok) return;
    await sleep(500);
  }
  throw new Error(`npm start was not ready within ${within} ms:\n${service.output().slice(-4000)}`);
}

/** The node process running server/main/start.ts under npm start. */
function serviceNode() {
  const table = readProcessTable();
  return processTree(table, service.child.pid as number).find((proc) => cmdline(proc.pid).includes('server/main/start.ts'))?.pid;
}

/** Chromium browsers' main processes (not their renderers, zygotes or helpers) of this service. */
function chromiums() {
  return processesMentioning(dataDir).filter((pid) => /chrom/.test(comm(pid)) && !cmdline(pid).includes('--type='));
}

// ---------------------------------------------------------------------------------------------
// The workload

type Run = { id: string; url: string; sent: number; ended?: number; status?: string; code?: string };
const runs: Run[] = [];
let startsRefused = 0;
const sessionStarts = { started: 0, refused: 0 };
/** Why starts were refused: the status and code answered, or `no answer`. */
const refusals = new Map<string, number>();
function refused(what: string, answer: { status: number; body: { code?: string } } | undefined) {
  const why = `${what} ${answer ? `${answer.status} ${answer.body?.code ?? ''}`.trim() : 'no answer'}`;
  refusals.set(why, (refusals.get(why) ?? 0) + 1);
}
let stopping = false;

const site = await startTestSite({
  '/catalog': (_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end('<!doctype html><title>shop</title><h1>Fruit</h1><ul><li>apple</li><li>pear</li><li>plum</li></ul>');
  },
});

console.log(`bench: npm start on embedded defaults in ${dataDir}, port ${port}, seed ${firstSeed}`);
await ready();

const email = `chaos-${Date.now()}@example.test`;
const registered = await http.post('/api/auth/register', { email, password: 'chaos password 1', firstName: 'Chaos', lastName: 'Monkey' });
if (registered.status !== 200) throw new Error(`register: ${registered.status} ${registered.text}`);
let verificationToken: string | undefined;
for (let waited = 0; !verificationToken && waited < 30_000; waited += 250) {
  verificationToken = output().match(/verification token: ([\w.-]+)/)?.[1];
  if (!verificationToken) await sleep(250);
}
const verified = await http.post('/api/auth/verify/submit', { token: verificationToken });
if (verified.status !== 200) throw new Error(`verify: ${verified.status} ${verified.text}`);
const as = { token: verified.body.token as string };
const slug = 'chaos';
await http.put('/api/projects', { name: 'Chaos', description: '', slug }, as);
const sessionIds: string[] = [];
for (let i = 0; i < SESSIONS; i++) sessionIds.push((await http.put(`/${slug}/api/sessions`, { name: `s${i}` }, as)).body.id);
// Browsers started and stopped by hand on a session of their own: a stop on a session a run uses
// would fail that run for a true cause (its browser was stopped), not a fault's.
const byHand = (await http.put(`/${slug}/api/sessions`, { name: 'by hand' }, as)).body.id as string;
const catalogSource = {
  nodes: {
    page: { type: 'browser.page' },
    open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/catalog` } },
    items: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: 'li' } },
  },
  outputs: { first: { $ref: 'items.text' } },
};
async function createCatalogPipeline(project: string) {
  const created = await http.put(`/${project}/api/pipelines`, { name: 'catalog', description: '', source: catalogSource }, as);
  if (created.status !== 200) throw new Error(`pipeline: ${created.status} ${created.text}`);
  return created.body.id as string;
}
const pipelineId = await createCatalogPipeline(slug);
// The probes sent while a dependency hangs go to a project of their own: the workload keeps its
// project at its browser limit, which would refuse a probe's start (429) before it met the hang.
const probeSlug = 'chaos-probes';
await http.put('/api/projects', { name: 'Chaos probes', description: '', slug: probeSlug }, as);
const probeSession = (await http.put(`/${probeSlug}/api/sessions`, { name: 'probes' }, as)).body.id as string;
const probePipelineId = await createCatalogPipeline(probeSlug);

/** One of the runs kept under way: start, then read it until it has ended, through any fault. */
async function runLoop(lane: number) {
  while (!stopping) {
    const session = sessionIds[lane % SESSIONS] as string;
    const sent = Date.now();
    const started = await http.post(`/${slug}/api/pipelines/${pipelineId}/start`, { session }, as).catch(() => undefined);
    if (started?.status !== 200) {
      startsRefused++;
      refused('run', started);
      await sleep(1000);
      continue;
    }
    const run: Run = { id: started.body.id, url: `/${slug}/api/pipelines/${pipelineId}/${started.body.id}`, sent };
    runs.push(run);
    await settle(run, Number.POSITIVE_INFINITY);
  }
}

/** Reads the run until it has ended or `until` (a time) has passed. */
async function settle(run: Run, until: number) {
  while (!run.ended && Date.now() < until) {
    const read = await http.get(run.url, as).catch(() => undefined);
    const status = read?.status === 200 ? (read.body.status.pipeline as string) : undefined;
    if (status === 'succeeded' || status === 'failed' || status === 'cancelled') {
      run.ended = Date.now();
      run.status = status;
      run.code = read?.body.error?.code;
      return;
    }
    if (stopping && Date.now() >= until) return;
    await sleep(500);
  }
}

/** Browser sessions started and stopped beside the runs. */
async function sessionLoop() {
  while (!stopping) {
    const session = byHand;
    const started = await http.post(`/${slug}/api/sessions/${session}/start`, {}, as).catch(() => undefined);
    if (started?.status === 200) {
      sessionStarts.started++;
      await sleep(3000);
      await http.post(`/${slug}/api/sessions/${session}/${started.body.id}/stop`, {}, as).catch(() => undefined);
    } else {
      sessionStarts.refused++;
      refused('browser', started);
    }
    await sleep(2000);
  }
}

// ---------------------------------------------------------------------------------------------
// The faults

type FaultKind = 'chromium' | 'temporal' | 'postgres' | 'stop-service' | 'kill-service' | 'hang-postgres' | 'hang-temporal';
type Fault = { kind: FaultKind; at: number; note: string; readyAgain?: number };
const faults: Fault[] = [];
const kinds: FaultKind[] = ['chromium', 'temporal', 'postgres', 'stop-service', 'kill-service', 'hang-postgres', 'hang-temporal'];

/** The embedded service's main process (its pid file's first line), or undefined. */
function leaderOf(which: 'postgres' | 'temporal') {
  const file =
    which === 'postgres' ? path.join(sharedDataDirOf(dataDir), 'postgres', 'postmaster.pid') : path.join(dataDir, 'temporal.sqlite.pid');
  try {
    return Number.parseInt(readFileSync(file, 'utf8').split('\n')[0] as string, 10) || undefined;
  } catch {
    return undefined;
  }
}

type Probe = { fault: 'hang-postgres' | 'hang-temporal'; what: 'read' | 'start' | 'health'; status: number | 'none'; ms: number };
/** What was answered, and how fast, while a dependency hung. */
const probes: Probe[] = [];

/** A request sent while a dependency hangs: its status (or none within PROBE_GIVE_UP_MS) and time. */
async function probe(fault: Probe['fault'], what: Probe['what'], send: () => Promise<{ status: number; body: { id?: string } }>) {
  const sent = Date.now();
  const answer = await Promise.race([send().catch(() => undefined), sleep(PROBE_GIVE_UP_MS).then(() => 'none' as const)]);
  const status = answer === 'none' ? 'none' : (answer?.status ?? 0);
  probes.push({ fault, what, status, ms: Date.now() - sent });
  // A start that was taken after all is a run like the others: counted and read to its end.
  if (what === 'start' && answer !== 'none' && answer?.status === 200 && answer.body.id) {
    const run: Run = { id: answer.body.id, url: `/${probeSlug}/api/pipelines/${probePipelineId}/${answer.body.id}`, sent };
    runs.push(run);
    void settle(run, Number.POSITIVE_INFINITY);
  }
  return `${what} ${status} in ${((Date.now() - sent) / 1000).toFixed(1)} s`;
}

async function inject(kind: FaultKind): Promise<Fault> {
  const at = Date.now();
  switch (kind) {
    case 'chromium': {
      const pid = chromiums()[0];
      if (!pid) return { kind, at, note: 'no browser running' };
      process.kill(pid, 'SIGKILL');
      return { kind, at, note: `pid ${pid}` };
    }
    case 'temporal': {
      const pids = processesMentioning(path.join(dataDir, 'temporal.sqlite')).filter((pid) => comm(pid) === 'temporal');
      for (const pid of pids) process.kill(pid, 'SIGKILL');
      return { kind, at, note: pids.length ? `pid ${pids.join(', ')}` : 'not found' };
    }
    case 'postgres': {
      const pids = processesMentioning(path.join(sharedDataDirOf(dataDir), 'postgres')).filter((pid) => comm(pid) === 'postgres');
      for (const pid of pids) process.kill(pid, 'SIGKILL');
      return { kind, at, note: pids.length ? `pid ${pids.join(', ')}` : 'not found' };
    }
    case 'stop-service': {
      const pid = serviceNode();
      if (!pid) return { kind, at, note: 'service process not found' };
      process.kill(pid, 'SIGSTOP');
      await sleep(STOPPED_FOR_MS);
      process.kill(pid, 'SIGCONT');
      return { kind, at, note: `pid ${pid}, ${STOPPED_FOR_MS / 1000} s` };
    }
    case 'hang-postgres':
    case 'hang-temporal': {
      const leader = leaderOf(kind === 'hang-postgres' ? 'postgres' : 'temporal');
      if (!leader) return { kind, at, note: 'not found' };
      // The leader and all under it: PostgreSQL's backends each run in a session of their own.
      const pids = processTree(readProcessTable(), leader).map((proc) => proc.pid);
      for (const pid of pids) process.kill(pid, 'SIGSTOP');
      try {
        const answers = await Promise.all([
          probe(kind, 'read', () => http.get(`/${probeSlug}/api/pipelines/${probePipelineId}`, as)),
          probe(kind, 'start', () => http.post(`/${probeSlug}/api/pipelines/${probePipelineId}/start`, { session: probeSession }, as)),
          probe(kind, 'health', () => http.get('/api/health')),
        ]);
        await sleep(Math.max(0, at + STOPPED_FOR_MS - Date.now()));
        return { kind, at, note: `${pids.length} processes, ${STOPPED_FOR_MS / 1000} s; ${answers.join(', ')}` };
      } finally {
        for (const pid of pids) {
          try {
            process.kill(pid, 'SIGCONT');
          } catch {
            // gone
          }
        }
      }
    }
    case 'kill-service': {
      const pid = service.child.pid as number;
      process.kill(-pid, 'SIGKILL');
      await service.exited;
      earlierOutput += service.output();
      service = spawnService('npm', ['start', '--silent'], env);
      return { kind, at, note: 'npm start again' };
    }
  }
}

const firstRound = [...kinds];
for (let i = firstRound.length - 1; i > 0; i--) {
  const j = Math.floor(random() * (i + 1));
  [firstRound[i], firstRound[j]] = [firstRound[j] as FaultKind, firstRound[i] as FaultKind];
}

const loops = [...Array.from({ length: RUNS_UNDER_WAY }, (_, lane) => runLoop(lane)), sessionLoop()];
const faultsEnd = Date.now() + SECONDS * 1000;
console.log(`bench: ${RUNS_UNDER_WAY} runs under way on ${SESSIONS} sessions, faults every ${FAULT_EVERY_S.join('–')} s for ${SECONDS} s`);
while (Date.now() < faultsEnd) {
  await sleep((FAULT_EVERY_S[0] + random() * (FAULT_EVERY_S[1] - FAULT_EVERY_S[0])) * 1000);
  if (Date.now() >= faultsEnd) break;
  // Every kind once first, in a random order (a short run still meets each), then at random.
  const kind = (faults.length < kinds.length ? firstRound[faults.length] : kinds[Math.floor(random() * kinds.length)]) as FaultKind;
  const fault = await inject(kind);
  faults.push(fault);
  await ready().then(
    () => {
      fault.readyAgain = Date.now();
    },
    (error: Error) => console.warn(`bench: not ready again after ${kind}: ${error.message.split('\n')[0]}`),
  );
  console.log(
    `  ${new Date(fault.at).toISOString().slice(11, 19)} ${kind} (${fault.note}): ready again in ${fault.readyAgain ? fault.readyAgain - fault.at : '—'} ms; runs so far ${runs.length}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Settling and counting

stopping = true;
const settleStart = Date.now();
await Promise.all(runs.filter((run) => !run.ended).map((run) => settle(run, settleStart + SETTLE_WITHIN_MS)));
await Promise.race([Promise.all(loops), sleep(10_000)]);
const settledIn = Date.now() - settleStart;

/** A run failed for a true cause when a fault fell in its time (from its start to its end). */
const faultDuring = (run: Run) =>
  faults.some((fault) => fault.at >= run.sent - 1000 && fault.at <= (run.ended ?? Number.POSITIVE_INFINITY) + 1000);
const succeeded = runs.filter((run) => run.status === 'succeeded');
const failed = runs.filter((run) => run.status === 'failed' || run.status === 'cancelled');
const trueFailures = failed.filter(faultDuring);
const falseFailures = failed.filter((run) => !faultDuring(run));
const lost = runs.filter((run) => !run.ended);
const codes = (list: Run[]) => {
  const counted = new Map<string, number>();
  for (const run of list) counted.set(run.code ?? run.status ?? '?', (counted.get(run.code ?? run.status ?? '?') ?? 0) + 1);
  return [...counted].map(([code, count]) => `${code} ${count}`).join(', ') || '—';
};
/** For each fault, how long until every run under way at it had ended. */
const settleAfterFault = faults.map((fault) => {
  const caught = runs.filter((run) => run.sent <= fault.at && (run.ended ?? Number.POSITIVE_INFINITY) >= fault.at);
  return Math.max(0, ...caught.map((run) => (run.ended ?? Number.NaN) - fault.at));
});
const longestSettle = Math.max(0, ...settleAfterFault.filter(Number.isFinite));

// Every browser still running belongs to a session resource that is running.
const activeResources = (
  await Promise.all(
    [...sessionIds, byHand].map(
      async (id) => (await http.get(`/${slug}/api/sessions/${id}`, as).catch(() => undefined))?.body?.resources ?? [],
    ),
  )
)
  .flat()
  .filter((resource: { status: string }) => ['starting', 'running', 'stopping'].includes(resource.status)).length;
const browsersRunning = chromiums().length;
const browsersLeaked = Math.max(0, browsersRunning - activeResources);

// A graceful stop, then whatever is left of this data folder is a stray.
const pid = service.child.pid as number;
process.kill(pid, 'SIGTERM');
const stoppedIn = await Promise.race([service.exited.then(() => true), sleep(60_000).then(() => false)]);
for (let waited = 0; processesMentioning(dataDir).length && waited < 10_000; waited += 250) await sleep(250);
const strays = processesMentioning(dataDir);
const strayNames = strays.map((stray) => comm(stray)).join(', ');
if (groupAlive(pid)) process.kill(-pid, 'SIGKILL');
for (const stray of strays) process.kill(stray, 'SIGKILL');
await site.close();

/** Per hung dependency: the statuses answered and the slowest answer. */
function hungAnswers() {
  if (!probes.length) return 'no hang injected';
  return (['hang-postgres', 'hang-temporal'] as const)
    .map((fault) => {
      const mine = probes.filter((entry) => entry.fault === fault);
      if (!mine.length) return `${fault}: not injected`;
      const statuses = new Map<string, number>();
      for (const entry of mine) statuses.set(`${entry.what} ${entry.status}`, (statuses.get(`${entry.what} ${entry.status}`) ?? 0) + 1);
      const slowest = Math.max(...mine.map((entry) => entry.ms));
      return `${fault}: ${[...statuses].map(([what, count]) => `${what} ×${count}`).join(', ')}; slowest ${(slowest / 1000).toFixed(1)} s`;
    })
    .join('; ');
}

const byKind = kinds.map((kind) => `${kind} ${faults.filter((fault) => fault.kind === kind).length}`).join(', ');
const rows = [
  ['faults injected', `${faults.length} (${byKind})`],
  ['runs started', String(runs.length)],
  ['succeeded', String(succeeded.length)],
  ['failed with a true cause (a fault in their time)', `${trueFailures.length} (${codes(trueFailures)})`],
  ['failed falsely (no fault in their time)', `${falseFailures.length} (${codes(falseFailures)})`],
  ['lost (never ended)', String(lost.length)],
  ['starts refused (the service down or busy)', String(startsRefused)],
  ['browser sessions started / refused', `${sessionStarts.started} / ${sessionStarts.refused}`],
  [
    'refusals by answer',
    [...refusals]
      .sort((a, b) => b[1] - a[1])
      .map(([why, count]) => `${why}: ${count}`)
      .join('; ') || '—',
  ],
  ['browsers leaked (running, no running resource)', `${browsersLeaked} (${browsersRunning} running, ${activeResources} resources)`],
  ['stray processes after SIGTERM', `${strays.length}${strays.length ? ` (${strayNames})` : ''}`],
  ['SIGTERM ended the service within 60 s', stoppedIn ? 'yes' : 'no'],
  ['answers while a dependency hung (read, run start, health)', hungAnswers()],
  ['longest time from a fault until every run it caught had ended', `${(longestSettle / 1000).toFixed(1)} s`],
  ['every run ended after the last fault within', `${(settledIn / 1000).toFixed(1)} s`],
];
const faultLines = faults.map(
  (fault, i) =>
    `| ${new Date(fault.at).toISOString().slice(11, 19)} | ${fault.kind} | ${fault.note} | ${fault.readyAgain ? ((fault.readyAgain - fault.at) / 1000).toFixed(1) : 'never'} | ${Number.isFinite(settleAfterFault[i]) ? ((settleAfterFault[i] as number) / 1000).toFixed(1) : 'lost'} |`,
);
const figures = `Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; ${SECONDS} s of faults, seed ${firstSeed}.

Reproduce: \`npm run bench:chaos\` (BENCH_CHAOS_SECONDS, BENCH_CHAOS_RUNS, BENCH_CHAOS_SEED).

| figure | value |
|---|---|
${rows.map(([name, value]) => `| ${name} | ${value} |`).join('\n')}

The faults in order (time of day, UTC; "ready" is until \`GET /api\` answered again; "settled" until
every run under way at the fault had ended):

| at | fault | what | ready s | settled s |
|---|---|---|---|---|
${faultLines.join('\n')}`;
writeFiguresBlock(docsFile, 'chaos.ts', 'Benchmark: faults survived (`npm run bench:chaos`)', figures);
for (const [name, value] of rows) console.log(`bench: ${name}: ${value}`);
if (falseFailures.length) console.log(`bench: false failures: ${falseFailures.map((run) => `${run.id} ${run.code}`).join('; ')}`);
rmSync(dataDir, { recursive: true, force: true });
rmSync(sharedDataDirOf(dataDir), { recursive: true, force: true });
process.exit(0);
