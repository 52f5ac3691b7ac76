/**
 * The model side of analysis and generation jobs, one turn per activity: load the stored
 * conversation, call the model (AI SDK `generateText`, tools without `execute`, structured output),
 * store its answer, usage and log lines, and tell the workflow what comes next. Everything a model
 * receives has passed the job's redactor; secrets reach it only as `{{name}}`.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { generateText, jsonSchema, type ModelMessage, Output, type Tool, tool } from 'ai';
import { z } from 'zod';
import type { AgentMessage } from '../../../db/entities/AnalysisJob.ts';
import { AnalysisJob, GenerationJob, Project } from '../../../db/entities/index.ts';
import type { TurnResult } from '../../../workflows/contracts/agentJobs.ts';
import { meter } from '../../billing/metering.ts';
import { enforceFunds } from '../../billing/shutdown.ts';
import type { Config } from '../../config.ts';
import { compilePipeline } from '../../pipelines/compiler.ts';
import { nodeCatalog } from '../../pipelines/engine/registry.ts';
import { pipelineJsonSchema, sourceSchema } from '../../pipelines/language.ts';
import { jobHidden, jobRedactor, recordMessages } from '../messages.ts';
import type { PageModel } from '../page/pageModel.ts';
import { pageModelSelectors } from '../page/pageModel.ts';
import { checkProposal, goalNotFoundSchema, type Proposal, proposalSchema, sourceFromProposal } from '../proposal.ts';
import { analysisToolSpecs } from '../tools.ts';
import { languageModel } from './models.ts';
import { declarationsFor, pagesShowed, singleValueForRecords } from './outputCheck.ts';
import { narrowToRequest } from './requestAttributes.ts';
import { requestFitProblems } from './requestFit.ts';
import { anyPageNames, askedFor, notFoundMessage, readRequestTerms, verifyAgainstRequest } from './verification.ts';

/** `temporal`: the client the activity runs with, read only for the shutdown a turn's metering may call for. */
type Deps = { orm: MikroORM; config: Config; serviceSecret: string; temporal: () => Client };
type Job = AnalysisJob | GenerationJob;

const MODEL_CALL_TIMEOUT_MS = 120_000;
/** Starts the refusal of a proposal whose extraction does not match the request's words. */
const UNVERIFIED_MARK = 'the extraction could not be verified against the request';

const ANALYSIS_SYSTEM = `You study a live web page to propose the steps of a browser automation pipeline.
Use the tools: page_model first; act in your own tab with fill, click and press to reach the data; call page_model again after each page change.
Every selector you use must come from page_model or aria_snapshot. Never guess a selector.
Values in the user's request written as {{name}} are secret parameters: pass them on as {{name}}, never ask for them.
When you know the steps, answer with the JSON proposal: goal, startUrl, steps (each with evidence from the page), parameters (secret flags), outputs (each a list of records with its fields and the count you saw across every page, or a single value), risks.
When the pages do not hold what the request asks for, answer {"goalNotFound": "why"} instead; never propose a heading in place of the data.`;

const GENERATION_SYSTEM = `You write a pipeline source (JSON, the pipeline language) that carries out an analysis's proposal.
Answer with the source only. Use only the node types of the catalog and only the selectors the proposal names.
A draft made by rules is given; keep it unless it is wrong. When told of compiler errors, run errors or output mismatches, fix them.`;

/**
 * Adds a call's usage to the job, and meters its tokens (by the job's id, once per step). When
 * that spends the account's last funds, the shutdown cancels this job's workflow too.
 */
async function recordUsage(
  deps: Deps,
  em: EntityManager,
  job: Job,
  kind: 'analysis' | 'generation',
  step: number,
  usage: { inputTokens?: number; outputTokens?: number },
) {
  const input = usage.inputTokens ?? 0;
  const output = usage.outputTokens ?? 0;
  await em
    .getConnection()
    .execute(
      `update ${kind === 'analysis' ? 'analysis_jobs' : 'generation_jobs'} set usage = jsonb_build_object('inputTokens', (usage->>'inputTokens')::bigint + ?, 'outputTokens', (usage->>'outputTokens')::bigint + ?, 'calls', (usage->>'calls')::int + 1) where id = ?`,
      [input, output, job.id],
    );
  if (input + output > 0) {
    const project = await em.findOneOrFail(Project, { id: job.project.id });
    const answer = await meter(em.fork(), deps.config.billing, project, {
      resourceId: job.id,
      unit: 'tokens',
      quantityMicro: BigInt(input + output) * 1_000_000n,
      reportId: `${job.id}:tokens:${step}`,
    });
    await enforceFunds(em, deps.temporal, deps.config, answer);
  }
}

/** The tools as the AI SDK takes them, without `execute`: the workflow runs each call as an activity. */
function analysisTools({ vision }: { vision: boolean }): Record<string, Tool> {
  return Object.fromEntries(
    Object.entries(analysisToolSpecs)
      .filter(([, spec]) => vision || !('vision' in spec && spec.vision))
      .map(([name, spec]) => [name, tool({ description: spec.description, inputSchema: jsonSchema(spec.inputSchema as Schema) })]),
  );
}

type Schema = Parameters<typeof jsonSchema>[0];

const toModelMessages = (messages: AgentMessage[]) => messages.map(({ role, content }) => ({ role, content }) as ModelMessage);

/** The page models an analysis was shown, from its tool results. */
function pageModelsSeen(messages: AgentMessage[]): PageModel[] {
  const models: PageModel[] = [];
  for (const message of messages) {
    if (message.role !== 'tool' || !Array.isArray(message.content)) continue;
    for (const part of message.content as { toolName: string; output: { type: string; value: unknown } }[]) {
      if (part.toolName === 'page_model' && part.output?.type === 'json' && part.output.value && typeof part.output.value === 'object') {
        models.push(part.output.value as PageModel);
      }
      // A walk through a paged listing answers the listings of every page it read.
      if (part.toolName === 'walk_listing' && part.output?.type === 'json') {
        const pages = (part.output.value as { pages?: unknown } | null)?.pages;
        if (Array.isArray(pages)) models.push(...(pages.filter((page) => page && typeof page === 'object') as PageModel[]));
      }
    }
  }
  return models;
}

/**
 * The ending of a job that reached a bound, or null. An analysis's names what it was looking for,
 * in the words of its request ("… without finding 'e-mail address' of a 'branch manager'").
 */
function limitReached(config: Config, job: Job, step: number, request?: string): TurnResult | null {
  const terms = request ? readRequestTerms(request) : null;
  const looking = terms ? ` without finding ${askedFor(terms)}` : '';
  if (job.usage.inputTokens + job.usage.outputTokens >= config.agents.maxTokens) {
    return {
      calls: [],
      done: true,
      error: { code: 'token_limit', message: `the job used its ${config.agents.maxTokens} tokens${looking}` },
    };
  }
  if (step > config.agents.maxSteps) {
    return { calls: [], done: true, error: { code: 'step_limit', message: `the job took its ${config.agents.maxSteps} steps${looking}` } };
  }
  return null;
}

/**
 * What an analysis may answer: a proposal, or that the pages do not hold what was asked. The root
 * says `type: object` beside the `anyOf`: providers that take the schema as a tool's input (or
 * check its root) want an object there.
 */
const analysisAnswerJsonSchema = {
  type: 'object',
  ...z.toJSONSchema(z.union([proposalSchema, goalNotFoundSchema])),
} as Parameters<typeof jsonSchema>[0];

/** One model turn of an analysis. */
export async function analysisTurn(deps: Deps, jobId: string, step: number): Promise<TurnResult> {
  const em = deps.orm.em.fork();
  const job = await em.findOneOrFail(AnalysisJob, { id: jobId }, { populate: ['messages', 'sealedSecrets'] });
  const limit = limitReached(deps.config, job, step, job.prompt);
  if (limit) return limit;
  const { hidden } = await jobHidden(em, deps.serviceSecret, job);
  if (job.messages.length === 0) {
    const first = { role: 'user' as const, step, content: [{ type: 'text', text: job.prompt }] };
    job.messages = await recordMessages(em, job, 'analysis', [first], hidden);
  }
  const entry = deps.config.agents.models.find((model) => model.id === job.model);
  const result = await generateText({
    model: languageModel(deps.config, 'analysis', job.model),
    system: ANALYSIS_SYSTEM,
    messages: toModelMessages(job.messages),
    tools: analysisTools({ vision: Boolean(entry?.vision) }),
    output: Output.object({ schema: jsonSchema(analysisAnswerJsonSchema) }),
    abortSignal: AbortSignal.timeout(MODEL_CALL_TIMEOUT_MS),
    maxRetries: 1,
  });
  const usage = { inputTokens: result.usage.inputTokens ?? 0, outputTokens: result.usage.outputTokens ?? 0 };
  await recordUsage(deps, em, job, 'analysis', step, usage);
  const answer = result.response.messages.map((message) => ({
    role: message.role as AgentMessage['role'],
    step,
    content: message.content,
    usage,
  }));
  await recordMessages(em, job, 'analysis', answer, hidden);
  if (result.toolCalls.length) {
    return {
      done: false,
      calls: result.toolCalls.map((call) => ({
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        input: (call.input ?? {}) as Record<string, unknown>,
      })),
    };
  }
  // The answer: a proposal whose selectors all come from the pages the job saw, or goalNotFound.
  const problems: string[] = [];
  let proposal: Proposal | null = null;
  let notFound: string | null = null;
  try {
    const answer = JSON.parse(result.text) as unknown;
    const giveUp = goalNotFoundSchema.safeParse(answer);
    const parsed = proposalSchema.safeParse(answer);
    if (giveUp.success) notFound = giveUp.data.goalNotFound;
    else if (parsed.success) proposal = parsed.data;
    else problems.push(...parsed.error.issues.map((issue) => `${issue.path.join('.') || 'answer'}: ${issue.message}`));
  } catch {
    problems.push('the answer is not JSON: answer with the proposal as JSON');
  }
  await em.refresh(job, { populate: ['messages'] });
  const seen = pageModelsSeen(job.messages);
  if (notFound !== null) {
    // The job ends without an output; its error says what the pages held instead.
    const message = jobRedactor(hidden).text(`${notFound.replace(/[.\s]+$/, '')}; ${pagesShowed(seen)}`);
    return { calls: [], done: true, error: { code: 'goal_not_found', message } };
  }
  const selectors = new Set(seen.flatMap((model) => [...pageModelSelectors(model)]));
  if (proposal) problems.push(...checkProposal(proposal, selectors));
  const heading = proposal && singleValueForRecords(proposal, job.prompt);
  if (heading) problems.push(heading);
  if (proposal && !problems.length) problems.push(...requestFitProblems(proposal, job.prompt, seen));
  // Verified against the request, whatever the model: the kind of value and the qualifiers it names.
  const unverified = proposal && !problems.length ? verifyAgainstRequest(proposal, job.prompt, seen) : null;
  if (unverified) {
    const named = unverified.missing.filter((phrase) => anyPageNames(phrase, seen));
    const refusedBefore = job.messages.some((message) => JSON.stringify(message.content).includes(UNVERIFIED_MARK));
    // Words no page shows, or a second miss: the pages do not hold it, and the job says which words.
    const lacking = unverified.attributes.length > 0 || unverified.pages !== null;
    if (named.length < unverified.missing.length || refusedBefore || (unverified.kind && !unverified.missing.length)) {
      const message = jobRedactor(hidden).text(
        notFoundMessage(unverified.terms, unverified, pagesShowed(seen).replace(/^the pages showed: /, '')),
      );
      return { calls: [], done: true, error: { code: 'goal_not_found', message } };
    }
    if (lacking && !unverified.missing.length)
      problems.push(
        `${UNVERIFIED_MARK}: ${[
          unverified.attributes.length
            ? `no field of what it extracts holds ${unverified.attributes.map((words) => `'${words}'`).join(' or ')}, which the request asks for each record: extract a field that holds each (by its label, or its values)`
            : '',
          unverified.pages
            ? `the request asks for '${unverified.pages}', but no step goes on past the first page: give the listing its paging (links, a "more" button, or scroll)`
            : '',
        ]
          .filter(Boolean)
          .join('; ')}, or answer {"goalNotFound": "why"}`,
      );
    else
      problems.push(
        `${UNVERIFIED_MARK}: nothing near what it extracts says ${named.map((phrase) => `'${phrase}'`).join(' or ')}, which the request asks for, though the pages show those words elsewhere: extract what is named by them (a heading, a caption, a label, a tab or an option), or answer {"goalNotFound": "why"}`,
      );
  }
  if (problems.length || !proposal) {
    await recordMessages(
      em,
      job,
      'analysis',
      [{ role: 'user', step, content: [{ type: 'text', text: `Your proposal was refused:\n- ${problems.join('\n- ')}\nAnswer again.` }] }],
      hidden,
    );
    return { calls: [], done: false };
  }
  // Each record narrowed to the values the request names, when it names them (requestAttributes.ts).
  proposal = narrowToRequest(proposal, job.prompt, seen);
  job.output = jobRedactor(hidden).object({
    ...proposal,
    // What each output must be, checked against the generation's dry run (outputCheck.ts).
    outputs: declarationsFor(proposal, seen),
    pageModel: seen[seen.length - 1] ?? null,
    pageModels: seen.length,
    selectors: [...selectors],
  }) as Record<string, unknown>;
  await em.flush();
  return { calls: [], done: true };
}

/** One model turn of a generation: a candidate source, compiled; errors go back as the next message. */
export async function generationTurn(
  deps: Deps,
  jobId: string,
  step: number,
): Promise<{ compiled: boolean; done: boolean; error?: TurnResult['error'] }> {
  const em = deps.orm.em.fork();
  const job = await em.findOneOrFail(GenerationJob, { id: jobId }, { populate: ['messages', 'analysis', 'analysis.sealedSecrets'] });
  const analysis = job.analysis as AnalysisJob | null;
  if (!analysis?.output)
    return { compiled: false, done: true, error: { code: 'no_analysis', message: 'the analysis this generation came from is gone' } };
  const limit = limitReached(deps.config, job, step);
  if (limit) return { compiled: false, done: true, error: limit.error };
  const { hidden } = await jobHidden(em, deps.serviceSecret, analysis);
  if (job.messages.length === 0) {
    const { pageModel: _pageModel, selectors: _selectors, pageModels: _count, ...proposal } = analysis.output as Record<string, unknown>;
    const catalog = nodeCatalog().nodes.map((node) => ({
      type: node.type,
      description: node.description,
      inputs: node.inputs,
      outputs: node.outputs,
    }));
    // The rules' translation of the proposal, the draft GENERATION_SYSTEM promises every model.
    const draft = sourceFromProposal(proposal as unknown as Proposal, analysis.values);
    const text = [
      'Write the pipeline source for this proposal. Its outputs must be what `outputs` declares: records with those fields, at least `count` of them, or one value.',
      `<proposal>${JSON.stringify({ proposal, defaults: analysis.values })}</proposal>`,
      `<draft>${JSON.stringify(draft)}</draft>`,
      `<catalog>${JSON.stringify(catalog)}</catalog>`,
    ].join('\n');
    const first = { role: 'user' as const, step, content: [{ type: 'text', text }] };
    job.messages = await recordMessages(em, job, 'generation', [first], hidden);
  }
  const result = await generateText({
    model: languageModel(deps.config, 'generation', job.model),
    system: GENERATION_SYSTEM,
    messages: toModelMessages(job.messages),
    output: Output.object({ schema: jsonSchema(pipelineJsonSchema() as Parameters<typeof jsonSchema>[0]) }),
    abortSignal: AbortSignal.timeout(MODEL_CALL_TIMEOUT_MS),
    maxRetries: 1,
  });
  const usage = { inputTokens: result.usage.inputTokens ?? 0, outputTokens: result.usage.outputTokens ?? 0 };
  await recordUsage(deps, em, job, 'generation', step, usage);
  await recordMessages(
    em,
    job,
    'generation',
    result.response.messages.map((message) => ({ role: message.role as AgentMessage['role'], step, content: message.content, usage })),
    hidden,
  );
  job.attempts += 1;
  let source: Record<string, unknown> | null = null;
  const problems: string[] = [];
  try {
    const parsed = sourceSchema.safeParse(JSON.parse(result.text));
    if (parsed.success) source = parsed.data as Record<string, unknown>;
    else problems.push(...parsed.error.issues.map((issue) => `${issue.path.join('.') || 'source'}: ${issue.message}`));
  } catch {
    problems.push('the answer is not JSON: answer with the pipeline source as JSON');
  }
  if (source) {
    const { errors, plan } = compilePipeline(source);
    job.source = source;
    // A dry run belongs to the candidate it ran: a new one is unverified until it runs.
    job.dryRun = null;
    job.errors = errors;
    job.plan = (plan as Record<string, unknown> | null) ?? null;
    problems.push(
      ...errors.map((error) => `${error.node ?? 'source'}${error.input ? `.${error.input}` : ''}: ${error.code}: ${error.message}`),
    );
    const known = new Set(((analysis.output as { selectors?: string[] }).selectors ?? []) as string[]);
    for (const selector of sourceSelectors(source)) {
      if (!known.has(selector))
        problems.push(`the selector ${JSON.stringify(selector)} is not one the analysis found on the page; use the proposal's selectors`);
    }
  }
  await em.flush();
  if (problems.length) {
    await askForCorrection(em, job, step, `The source does not compile:\n- ${problems.join('\n- ')}`, hidden);
    return { compiled: false, done: false };
  }
  return { compiled: true, done: false };
}

/**
 * Tells a generation model its candidate failed when run, or ran but its result is not what the
 * proposal declared (`output_mismatch`, one line per difference), for the next attempt.
 */
export async function reportDryRunFailure(
  deps: Deps,
  jobId: string,
  step: number,
  failure: string,
  code: 'dry_run_failed' | 'output_mismatch' = 'dry_run_failed',
) {
  const em = deps.orm.em.fork();
  const job = await em.findOneOrFail(GenerationJob, { id: jobId }, { populate: ['analysis', 'analysis.sealedSecrets'] });
  const { hidden } = await jobHidden(em, deps.serviceSecret, job.analysis as AnalysisJob);
  const problem =
    code === 'output_mismatch'
      ? `The source compiled and its dry run ran, but the result is not what the proposal's outputs declare:\n- ${failure.split('\n').join('\n- ')}\nRead every page of a listing (paging) and every record, with the declared fields.`
      : `The source compiled, but its dry run on the page failed: ${failure}`;
  await askForCorrection(em, job, step, problem, hidden);
}

/** Tells a generation model what is wrong with its candidate, asking for a corrected source next turn. */
async function askForCorrection(em: EntityManager, job: GenerationJob, step: number, problem: string, hidden: readonly string[]) {
  const text = `${problem}\nAnswer with a corrected source.`;
  await recordMessages(em, job, 'generation', [{ role: 'user', step, content: [{ type: 'text', text }] }], hidden);
}

/** Every selector input in a source, sub-graphs included. */
export function sourceSelectors(source: Record<string, unknown>): string[] {
  const selectors: string[] = [];
  const walk = (nodes: unknown) => {
    if (!nodes || typeof nodes !== 'object') return;
    for (const node of Object.values(
      nodes as Record<
        string,
        { inputs?: Record<string, unknown>; body?: { nodes: unknown }; then?: { nodes: unknown }; else?: { nodes: unknown } }
      >,
    )) {
      const selector = node?.inputs?.selector;
      if (typeof selector === 'string') selectors.push(selector);
      for (const block of [node?.body, node?.then, node?.else]) if (block) walk(block.nodes);
    }
  };
  walk(source.nodes);
  return selectors;
}
