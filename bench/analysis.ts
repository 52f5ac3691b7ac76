/**
 * `npm run bench:analysis`: 25 served page shapes (bench/support/shapes.ts), each asked for in two
 * phrasings, careful and hurried: 50 prompts per model. Each prompt goes analysis → accept →
 * generation → accept (never forced), then a run of the accepted version in a fresh browser. It
 * scores:
 * - correct: the run's records equal what the page served (or, on the page that lacks what is
 *   asked, the chain ended loud);
 * - loud: the chain ended with an error (analysis, generation, an accept refused, the run failed);
 * - silent wrong: it was accepted and ran, with other data.
 * The correct versions then run again against a cosmetic redesign of the pages.
 *
 * Models: `builtin`; `local` (the small model in .models, analysis only, generation by builtin);
 * `scripted-good`, an OpenAI-compatible stand-in whose answers the builtin rules script, which drives
 * the model path (HTTP, the AI SDK provider, tool calls, structured output) end to end.
 *
 * BENCH_MODELS=builtin,local picks models; BENCH_SHAPES=pager,login picks the shapes whose name
 * holds one of the words. A run of every shape rewrites the sections of the models it ran in
 * docs/benchmarks/analysis.md and keeps the others; a filtered run only prints.
 *
 * BENCH_SET=heldout scores the held-out set instead (bench/support/heldoutShapes.ts, issue 38): 20
 * shapes with one prompt each, scored the same way, written to the file's "Held-out set (issue 38)"
 * section only (bench/support/heldoutReport.ts); a run of the tuned set keeps that section as it is.
 * It is scored once at the end of a change, never tuned to. BENCH_SET=heldout2 does the same with the
 * second held-out set (bench/support/heldoutShapes2.ts): 20 shapes with two prompts each, written to
 * the "Held-out set 2" section. A run of any set keeps the other sets' sections as they are.
 *
 * BENCH_SET=heldout3 scores the third held-out set (bench/support/heldoutShapes3.ts), written blind to
 * the proposer for the change after the one held-out set 2 judged: 20 new page designs, domains and
 * interaction patterns (ARIA widgets, a shadow root, an iframe, a virtualised grid, a modal, a wizard,
 * paging by query string, a scroll sentinel, French number formats…), two prompts each, 5 pages that
 * lack what is asked. It is written to the "Held-out set 3" section, scored once, never tuned to;
 * `node bench/support/checkHeldout3Pages.ts` checks its pages without any analysis.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  type HeldoutSet,
  heldoutBlock,
  heldoutBlockOf,
  heldoutModelsOf,
  heldoutSets,
  type ModelSection,
  type Summary,
  withHeldoutBlock,
} from './support/heldoutReport.ts';
import { heldoutShapes, startHeldoutSite } from './support/heldoutShapes.ts';
import { heldoutShapes2, startHeldout2Site } from './support/heldoutShapes2.ts';
import { heldoutShapes3, startHeldout3Site } from './support/heldoutShapes3.ts';
import { startScriptedGoodModel } from './support/scriptedModel.ts';
import { type Phrasing, SECRET, type Shape, startShapesSite, shapes as tunedShapes } from './support/shapes.ts';
import { machineLine, percentile, startBenchStack } from './support/stack.ts';

const AGENT_MAX_SECONDS = 120;
/** A job or a run that has not ended by then is stopped and counted loud (a hang is not a success). */
const JOB_WAIT_MS = (AGENT_MAX_SECONDS + 60) * 1000;
const RUN_WAIT_MS = 180_000;
const MODEL_ORDER = ['builtin', 'local', 'scripted-good'];
const phrasings: Phrasing[] = ['careful', 'hurried'];

type Verdict = 'correct' | 'loud' | 'silent wrong';
type Outcome = {
  shape: Shape;
  phrasing: Phrasing;
  verdict: Verdict;
  /** Milliseconds from the prompt to the accepted version (or to where the chain ended). */
  ms: number;
  note: string;
  accepted: boolean;
  pipelineId?: string;
  sessionId?: string;
  /** The arguments its runs get. */
  args?: Record<string, string>;
  /** Still correct after the cosmetic redesign (correct versions only). */
  redesign?: boolean;
  /** The prompt's password came back in a job's answer (prompt, messages, output). */
  secretOut: boolean;
};
const benchSet = process.env.BENCH_SET ?? 'tuned';
/** Each set's shapes and site, by its `BENCH_SET` name. */
const sets = {
  tuned: { shapes: tunedShapes, startSite: startShapesSite },
  heldout: { shapes: heldoutShapes, startSite: startHeldoutSite },
  heldout2: { shapes: heldoutShapes2, startSite: startHeldout2Site },
  heldout3: { shapes: heldoutShapes3, startSite: startHeldout3Site },
} satisfies Record<'tuned' | HeldoutSet, unknown>;
const isSet = (name: string): name is keyof typeof sets => Object.hasOwn(sets, name);
if (!isSet(benchSet)) {
  console.error(`bench: BENCH_SET=${benchSet}: it is "tuned" (the default) or one of ${heldoutSets.map((set) => `"${set}"`).join(', ')}`);
  process.exit(1);
}
/** The held-out set scored, or null for the tuned set. */
const heldout = benchSet === 'tuned' ? null : benchSet;
const shapes: Shape[] = sets[benchSet].shapes;

const shapeFilter = (process.env.BENCH_SHAPES ?? '')
  .split(',')
  .map((word) => word.trim().toLowerCase())
  .filter(Boolean);
const chosen = shapeFilter.length ? shapes.filter((shape) => shapeFilter.some((word) => shape.name.toLowerCase().includes(word))) : shapes;
if (!chosen.length) {
  console.error(`bench: BENCH_SHAPES=${process.env.BENCH_SHAPES} matches none of: ${shapes.map((shape) => shape.name).join('; ')}`);
  process.exit(1);
}

const site = await sets[benchSet].startSite();
const scripted = await startScriptedGoodModel();
console.log('bench: starting the stack (scratch database, Temporal dev server, api, worker, browser host)');
const stackStarted = Date.now();
const stack = await startBenchStack({
  // A small local model can wander; each job stops after two minutes.
  AGENT_MAX_SECONDS: String(AGENT_MAX_SECONDS),
  MODELS: JSON.stringify([
    {
      id: 'scripted-good',
      provider: 'openai-compatible',
      model: 'scripted-good',
      baseUrl: scripted.url,
      roles: ['analysis', 'generation'],
    },
  ]),
});
console.log(`bench: stack up in ${((Date.now() - stackStarted) / 1000).toFixed(1)} s`);
const api = `/${stack.slug}/api`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An api call that answers errors too: `{status, body}`, the body parsed when it is JSON. */
async function request(method: string, url: string, body?: unknown) {
  const response = await fetch(`${stack.base}${url}`, {
    method,
    headers: { authorization: `Bearer ${stack.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: response.status, body: parsed as any };
}

/** Reads until `done`, or until the time is up: `null` then. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T | null> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > end) return null;
    await sleep(250);
  }
}

const ending = (error: { code?: string; message?: string } | null | undefined) =>
  error ? `${error.code ?? 'error'}: ${String(error.message ?? '').slice(0, 160)}` : '';

/** A value as text, numbers in one spelling ("10.00", "10" and 10 are the same). */
function canon(value: unknown) {
  const text = (typeof value === 'string' ? value : JSON.stringify(value ?? null)).replace(/\s+/g, ' ').trim();
  return /^-?\d+(\.\d+)?$/.test(text) ? String(Number(text)) : text;
}
const recordKey = (values: unknown[]) => JSON.stringify(values.map(canon).sort());
const nameKey = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');

/** An output's records: a list, or one record (an object); text is not records. */
function recordsOf(output: unknown): Record<string, unknown>[] | null {
  if (Array.isArray(output))
    return output.map(
      (item) => (item && typeof item === 'object' && !Array.isArray(item) ? item : { value: item }) as Record<string, unknown>,
    );
  if (output && typeof output === 'object') return [output as Record<string, unknown>];
  return null;
}

function describeResult(result: Record<string, unknown> | null) {
  return (
    Object.entries(result ?? {})
      .map(([name, output]) => {
        const records = recordsOf(output);
        if (!records) return `${name}: ${JSON.stringify(output).slice(0, 60)}`;
        return `${name}: ${records.length} record(s) with ${[...new Set(records.flatMap((record) => Object.keys(record)))].join(', ') || 'no fields'}`;
      })
      .join('; ') || 'no outputs'
  );
}

/**
 * Whether a run's result holds the shape's records: one output whose records have the expected
 * values, in order (field names aside, except where the page names the fields). Else what differed.
 */
function judge(result: Record<string, unknown> | null, shape: Shape): { ok: boolean; note: string } {
  const want = shape.expected.map(recordKey);
  let best = { found: 0, of: '' };
  for (const [name, output] of Object.entries(result ?? {})) {
    const records = recordsOf(output);
    if (!records) continue;
    const got = records.map((record) => recordKey(Object.values(record)));
    if (got.length === want.length && got.every((key, index) => key === want[index])) {
      if (!shape.fields) return { ok: true, note: '' };
      const names = Object.keys(records[0] ?? {}).map(nameKey);
      const named = shape.fields.every((accepted) => accepted.some((candidate) => names.includes(nameKey(candidate))));
      if (named && names.length === shape.fields.length) return { ok: true, note: '' };
      return {
        ok: false,
        note: `the values are right, but \`${name}\`'s fields are named ${Object.keys(records[0] ?? {}).join(', ')}; the page labels them ${shape.fields.map((accepted) => accepted[0]).join(', ')}`,
      };
    }
    const found = want.filter((key) => got.includes(key)).length;
    if (found >= best.found) best = { found, of: name };
  }
  const found = best.of ? ` (\`${best.of}\` holds ${best.found} of the ${want.length} records)` : '';
  return { ok: false, note: `expected ${want.length} records; got ${describeResult(result)}${found}` };
}

/** Stops the session's browsers: the next run starts a fresh one, without the cookies of a login. */
async function stopBrowsers(sessionId: string) {
  const session = await request('GET', `${api}/sessions/${sessionId}`);
  for (const resource of session.body?.resources ?? []) {
    if (resource.status === 'starting' || resource.status === 'running')
      await request('POST', `${api}/sessions/${sessionId}/${resource.id}/stop`);
  }
}

/** What a user passes the accepted version: their password to each secret parameter; the rest keep their defaults. */
function argsFor(source: unknown, shape: Shape): Record<string, string> {
  const parameters = (source as { parameters?: Record<string, { secret?: boolean }> } | null)?.parameters ?? {};
  return Object.fromEntries(
    Object.entries(parameters).flatMap(([name, parameter]) => (parameter.secret && shape.secret ? [[name, shape.secret]] : [])),
  );
}

async function runVersion(pipelineId: string, sessionId: string, args: Record<string, string>) {
  const started = await request('POST', `${api}/pipelines/${pipelineId}/start`, { session: sessionId, args });
  if (started.status !== 200) return { ended: false as const, note: `run refused: ${started.status} ${ending(started.body)}` };
  const view = await until(
    async () => (await request('GET', `${api}/pipelines/${pipelineId}/${started.body.id}`)).body,
    (run) => !['queued', 'running'].includes(run?.status?.pipeline),
    RUN_WAIT_MS,
  );
  if (!view) {
    await request('POST', `${api}/pipelines/${pipelineId}/${started.body.id}/stop`);
    return { ended: false as const, note: `the run did not end in ${RUN_WAIT_MS / 1000} s` };
  }
  if (view.status.pipeline !== 'succeeded') return { ended: false as const, note: `run ${view.status.pipeline}: ${ending(view.error)}` };
  return { ended: true as const, result: view.result as Record<string, unknown> | null };
}

/** Waits until a job's agent stopped; a job still running then is stopped (and says so). */
async function awaitJob(kind: 'analysis' | 'generation', id: string) {
  const read = async () => (await request('GET', `${api}/${kind}/${id}`)).body;
  const job = await until(read, (view) => view?.agent === 'stopped', JOB_WAIT_MS);
  if (job) return { job, timedOut: false };
  await request('POST', `${api}/${kind}/${id}/stop`);
  return { job: await read(), timedOut: true };
}

async function chain(shape: Shape, phrasing: Phrasing, model: string): Promise<Outcome> {
  const label = `${shape.name} (${phrasing}, ${model})`;
  const pipelineId = (await request('PUT', `${api}/pipelines`, { name: label })).body.id as string;
  // A session per prompt: no cookie of an earlier login helps a later prompt.
  const sessionId = (await request('PUT', `${api}/sessions`, { name: label })).body.id as string;
  const base: Pick<Outcome, 'shape' | 'phrasing' | 'pipelineId' | 'sessionId' | 'args'> = { shape, phrasing, pipelineId, sessionId };
  const started = Date.now();
  let secretOut = false;
  const watch = (view: unknown) => {
    secretOut ||= JSON.stringify(view ?? null).includes(SECRET);
  };
  const loud = (note: string, accepted = false): Outcome => ({
    ...base,
    accepted,
    secretOut,
    // On the page without what is asked, a loud end is the right answer.
    verdict: shape.goalMissing ? 'correct' : 'loud',
    ms: Date.now() - started,
    note: shape.goalMissing ? `loud, as it should be: ${note}` : note,
  });
  try {
    const analysis = await request('PUT', `${api}/pipelines/${pipelineId}/analysis`, {
      session: sessionId,
      model,
      prompt: shape.prompts[phrasing]?.(site.url),
    });
    if (analysis.status !== 200) return loud(`analysis refused: ${analysis.status} ${ending(analysis.body)}`);
    const analysed = await awaitJob('analysis', analysis.body.id);
    watch(analysed.job);
    if (analysed.timedOut) return loud(`analysis: still running after ${JOB_WAIT_MS / 1000} s`);
    if (analysed.job.error || !analysed.job.output) return loud(`analysis ${ending(analysed.job.error) || 'ended without a proposal'}`);
    // The local model proposes; its proposal is translated by builtin (it is an analysis model only).
    const generation = await request('POST', `${api}/analysis/${analysis.body.id}/accept`, {
      model: model === 'local' ? 'builtin' : model,
    });
    if (generation.status !== 200) return loud(`analysis accept: ${generation.status} ${ending(generation.body)}`);
    const generated = await awaitJob('generation', generation.body.id);
    watch(generated.job);
    // As a user would: accept, never with force. An unverified generation is refused (400
    // generation_unverified), and that is a loud end.
    const accepted = await request('POST', `${api}/generation/${generation.body.id}/accept`, {});
    const generationError = generated.timedOut
      ? `generation: still running after ${JOB_WAIT_MS / 1000} s`
      : generated.job.error
        ? `generation ${ending(generated.job.error)}`
        : '';
    if (accepted.status !== 200) return loud(`${generationError ? `${generationError}; ` : ''}accept: ${ending(accepted.body)}`);
    if (generationError) return loud(`${generationError} (the accept without force went through)`, true);
    const ms = Date.now() - started;
    await stopBrowsers(sessionId);
    const args = argsFor(generated.job.output, shape);
    base.args = args;
    const run = await runVersion(pipelineId, sessionId, args);
    if (!run.ended) return { ...loud(run.note, true), ms };
    if (shape.goalMissing)
      return { ...base, accepted: true, secretOut, verdict: 'silent wrong', ms, note: `succeeded with ${describeResult(run.result)}` };
    const { ok, note } = judge(run.result, shape);
    return { ...base, accepted: true, secretOut, verdict: ok ? 'correct' : 'silent wrong', ms, note };
  } catch (error) {
    return loud(`bench: ${(error as Error).message.slice(0, 200)}`);
  } finally {
    await stopBrowsers(sessionId).catch(() => undefined);
  }
}

const git = (...args: string[]) => {
  try {
    return execFileSync('git', args, { cwd: import.meta.dirname, encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
};
const commit = `${git('rev-parse', '--short', 'HEAD') || 'unknown'}${git('status', '--porcelain') ? ' with uncommitted changes' : ''}`;
const minutes = (ms: number) => `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
const cell = (text: string) => text.replaceAll('|', '/').replaceAll('\n', ' ').replaceAll('<', '&lt;');
const shown = (prompt: string) => prompt.replaceAll(site.url, '{site}').replaceAll(SECRET, '<secret>');

function modelTitle(model: string) {
  if (model === 'builtin') return '`builtin`';
  if (model === 'local') return `\`local\` (${stack.config.agents.localModel?.name} through node-llama-cpp; generation by builtin)`;
  if (model === 'scripted-good') return '`scripted-good`: the builtin rules answering through the OpenAI-compatible stand-in';
  return `\`${model}\``;
}

function section(model: string, outcomes: Outcome[], ms: number, extra: string[]): ModelSection {
  const count = (verdict: Verdict) => outcomes.filter((outcome) => outcome.verdict === verdict).length;
  const correctRuns = outcomes.filter((outcome) => outcome.redesign !== undefined);
  const times = outcomes.filter((outcome) => outcome.accepted).map((outcome) => outcome.ms);
  const leaks = outcomes.filter((outcome) => outcome.secretOut);
  const measured = `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, commit ${commit}`;
  const summary: Summary = {
    correct: count('correct'),
    loud: count('loud'),
    silentWrong: count('silent wrong'),
    prompts: outcomes.length,
    redesign: `${correctRuns.filter((outcome) => outcome.redesign).length}/${correctRuns.length}`,
    minutes: minutes(ms),
    measured,
  };
  const text = [
    `${heldout ? '####' : '###'} ${modelTitle(model)}`,
    '',
    `Measured ${measured}: ${outcomes.length} prompts in ${minutes(ms)}.`,
    '',
    `- Correct: **${summary.correct}/${outcomes.length}**; loud: **${summary.loud}/${outcomes.length}**; silent wrong: **${summary.silentWrong}/${outcomes.length}**`,
    `- Median time from prompt to accepted version: **${times.length ? Math.round(percentile(times, 50)) : '-'} ms** (p95 ${times.length ? Math.round(percentile(times, 95)) : '-'} ms, over the ${times.length} accepted)`,
    `- Still correct after the cosmetic redesign: **${summary.redesign}** (the versions that ran correct; the page without what is asked has none to rerun)`,
    `- The prompt's password in a job's answer (prompt, messages, output): ${leaks.length ? `**${leaks.length} prompt(s)** (${leaks.map((outcome) => `${outcome.shape.name}, ${outcome.phrasing}`).join('; ')})` : 'none'}`,
    ...extra,
    '',
    '| # | shape | phrasing | outcome | prompt → accepted | after redesign | note |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...outcomes.map(
      (outcome, index) =>
        `| ${index + 1} | ${cell(outcome.shape.name)} | ${outcome.phrasing} | ${outcome.verdict} | ${outcome.accepted ? `${outcome.ms} ms` : '-'} | ${
          outcome.redesign === undefined ? '-' : outcome.redesign ? 'yes' : 'no'
        } | ${cell(outcome.note)} |`,
    ),
  ].join('\n');
  return { summary, text };
}

const models = (process.env.BENCH_MODELS ?? `builtin,${stack.config.agents.localModel ? 'local,' : ''}scripted-good`)
  .split(',')
  .map((model) => model.trim())
  .filter(Boolean);
const sections = new Map<string, ModelSection>();
try {
  for (const model of models) {
    const modelStarted = Date.now();
    site.setCosmetic(false);
    const outcomes: Outcome[] = [];
    for (const shape of chosen) {
      // A shape of the first held-out set has one prompt, in one of the phrasings.
      for (const phrasing of phrasings.filter((each) => shape.prompts[each])) {
        const outcome = await chain(shape, phrasing, model);
        outcomes.push(outcome);
        console.log(`${model}: ${shape.name} (${phrasing}): ${outcome.verdict} in ${outcome.ms} ms ${outcome.note}`);
      }
    }
    // The correct versions against the redesigned pages, each in a fresh browser.
    site.setCosmetic(true);
    for (const outcome of outcomes) {
      if (outcome.verdict !== 'correct' || outcome.shape.goalMissing || !outcome.pipelineId || !outcome.sessionId) continue;
      const run = await runVersion(outcome.pipelineId, outcome.sessionId, outcome.args ?? {});
      outcome.redesign = run.ended && judge(run.result, outcome.shape).ok;
      if (!outcome.redesign)
        outcome.note = `${outcome.note} after the redesign: ${run.ended ? judge(run.result, outcome.shape).note : run.note}`;
      console.log(`${model}: ${outcome.shape.name} (${outcome.phrasing}) after the redesign: ${outcome.redesign ? 'correct' : 'not'}`);
    }
    site.setCosmetic(false);
    const extra =
      model === 'scripted-good'
        ? [
            `- The stand-in received ${scripted.received.length} requests; the password given in the prompts appears in ${scripted.received.some((body) => body.includes(SECRET)) ? '**some** (a bug)' : 'none'} of them.`,
          ]
        : [];
    sections.set(model, section(model, outcomes, Date.now() - modelStarted, extra));
    console.log(`${model}: done in ${minutes(Date.now() - modelStarted)}`);
  }
} finally {
  await stack.stop();
  await scripted.close();
  await site.close();
}

const file = path.join(import.meta.dirname, '..', 'docs', 'benchmarks', 'analysis.md');
const before = existsSync(file) ? readFileSync(file, 'utf8') : '';
const byModelOrder = (a: string, b: string) => (MODEL_ORDER.indexOf(a) + 1 || 99) - (MODEL_ORDER.indexOf(b) + 1 || 99);
console.log([...sections.values()].map((entry) => entry.text).join('\n\n'));
if (shapeFilter.length) {
  console.log(
    `bench: BENCH_SHAPES is set (${chosen.length} of ${shapes.length} shapes): ${path.relative(process.cwd(), file)} is left as it was`,
  );
  process.exit(0);
}
if (heldout) {
  // Only the held-out block changes; its models not run now are kept as a former run wrote them.
  const models = new Map([...heldoutModelsOf(before, heldout), ...sections]);
  const block = heldoutBlock({
    shapes,
    url: site.url,
    models: [...models.keys()].sort(byModelOrder).map((model) => [model, models.get(model) as ModelSection]),
    machine: machineLine(),
    set: heldout,
  });
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, withHeldoutBlock(before || '# Benchmark: analysis → generation\n', block, heldout));
  console.log(`bench: wrote the held-out section of ${path.relative(process.cwd(), file)}`);
  process.exit(0);
}
// The sections a partial run (BENCH_MODELS) did not measure are kept from the file as they were.
const kept = new Map<string, ModelSection>();
if (before) {
  for (const match of before.matchAll(/<!-- model (\S+) (\{.*?\}) -->\n([\s\S]*?)\n<!-- \/model \1 -->/g)) {
    kept.set(match[1] as string, { summary: JSON.parse(match[2] as string), text: match[3] as string });
  }
}
const all = new Map([...kept, ...sections]);
const order = [...all.keys()].sort(byModelOrder);

const report = [
  '# Benchmark: analysis → generation',
  '',
  'Command: `npm run bench:analysis` (bench/analysis.ts). 25 page shapes, served by bench/support/shapes.ts on one local site, each asked for in two phrasings: one written with care, one as a hurried user types it. 50 prompts per model.',
  '',
  '- The first ten shapes are the original ones: a login leading to a paged orders table, a table, a paged list, a search form with results, detail pages, nested navigation, two tables of which one is asked for, a grid of cards, a username login leading to a message list, a search box without a button.',
  '- The fifteen after them are the patterns of issue 22: a search form in front of a results table; news paged by an "Older stories" link; a list behind a "Show more" button whose markup has only one-letter classes (its fields are named only by the labels in each item); a "Load more" button; infinite scroll; numbered pages whose current page is a `<span>`; a pager with only a "Next" link; a `rel=next` arrow link; a login written without quotes; a login by user name in single quotes; a table with row headers; a table of several `tbody`s told from another by its caption; detail pages (definition lists) reached from a table; a search submitted with nothing typed; a page that does not hold what the prompt asks for.',
  '',
  'Each prompt runs in a session of its own: analysis → accept (generation by the same model; by builtin for `local`) → generation (compiled and dry-run) → accept, never with `force`. The accepted version then runs in a fresh browser (the analysis browser is stopped first, so no login cookie helps). Each prompt is scored:',
  '',
  '- **correct**: the run succeeded and one of its outputs holds exactly the records the page served, in order. Records are compared by their values as text (numbers in one spelling: "10.00" and 10 are equal); field names are free, except on the "Show more" shape, whose items label their fields: there they must be those labels (title or name, author, year), not class names.',
  '- **loud**: the chain ended with an error the user sees: the analysis ended with an error (such as `goal_not_found`) or without a proposal, the generation ended with an error (such as `output_mismatch` or `dry_run_failed`), the accept answered 400 (such as `generation_unverified`), or the accepted version’s run failed. A job still running after 180 s, or a run after 180 s, is stopped and counted loud.',
  '- **silent wrong**: accepted and run to success, with other records.',
  '- On the page that does not hold what is asked ("page without what is asked"), a loud end **is** the right answer and counts as correct; any success there is silent wrong.',
  '',
  'The versions that ran correct then run again against a cosmetic redesign of every page: other classes (the one-letter ones too) and wrappers around the content, with the same content, ids, test ids and labels. Every job’s answers (analysis and generation, with their prompt, messages and output) are searched for the password the login prompts give.',
  '',
  '`scripted-good` is not a language model: an OpenAI-compatible stand-in (bench/support/scriptedModel.ts) whose every answer the builtin rules compute. It scores as builtin does unless the model path (HTTP, the AI SDK provider, tool calls, structured output) loses something, and it checks that no request a model receives holds the password.',
  '',
  '`BENCH_MODELS=builtin,local` picks the models, `BENCH_SHAPES=pager,login` the shapes whose name holds one of the words. A run of all the shapes rewrites the sections of the models it ran and keeps the others; a run with `BENCH_SHAPES` only prints.',
  '',
  machineLine(),
  '',
  '## Summary',
  '',
  '| model | correct | loud | silent wrong | correct after the redesign | run time | measured |',
  '| --- | --- | --- | --- | --- | --- | --- |',
  ...order.map((model) => {
    const { summary } = all.get(model) as { summary: Summary };
    return `| \`${model}\` | ${summary.correct}/${summary.prompts} | ${summary.loud}/${summary.prompts} | ${summary.silentWrong}/${summary.prompts} | ${summary.redesign} | ${summary.minutes} | ${summary.measured} |`;
  }),
  '',
  '## The prompts',
  '',
  '`{site}` is the local site’s address, `<secret>` the password.',
  '',
  '| shape | careful | hurried |',
  '| --- | --- | --- |',
  ...shapes.map(
    (shape) =>
      `| ${cell(shape.name)} | ${cell(shown(shape.prompts.careful?.(site.url) ?? '-'))} | ${cell(shown(shape.prompts.hurried?.(site.url) ?? '-'))} |`,
  ),
  '',
  '## Per model',
  '',
  ...order.flatMap((model) => {
    const { summary, text } = all.get(model) as ModelSection;
    return [`<!-- model ${model} ${JSON.stringify(summary)} -->`, text, `<!-- /model ${model} -->`, ''];
  }),
].join('\n');

mkdirSync(path.dirname(file), { recursive: true });
// The held-out sections are their own sets': kept as they are.
writeFileSync(
  file,
  heldoutSets.reduce((text, set) => {
    const section = heldoutBlockOf(before, set);
    return section ? withHeldoutBlock(text, section, set) : text;
  }, report),
);
console.log(`bench: wrote ${path.relative(process.cwd(), file)}`);
process.exit(0);
