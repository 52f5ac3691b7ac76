/**
 * The analysis tools, executed on the browser host in a tab of the job's own (the user's tab is
 * never driven). `{{name}}` placeholders in typed values are filled in here, from the job's sealed
 * values, and only here; every result is redacted before it is stored or shown to the model.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { BrowserContext, Page } from 'playwright-core';
import { z } from 'zod';
import { AnalysisJob, Pipeline, PipelineVersion, type ScreenshotBox } from '../../../db/entities/index.ts';
import type { ToolCallRequest } from '../../../workflows/contracts/agentJobs.ts';
import { jobHidden, recordMessages } from '../../agents/messages.ts';
import type { PageModel } from '../../agents/page/pageModel.ts';
import { readPageModel } from '../../agents/page/readPageModel.ts';
import { MAX_WALK_PAGES, nextWalkStep, type WalkStep, walkPage } from '../../agents/page/walk.ts';
import { fillPlaceholders } from '../../agents/promptValues.ts';
import { proposalSchema } from '../../agents/proposal.ts';
import { isAnalysisTool } from '../../agents/tools.ts';
import { nodeCatalog } from '../../pipelines/engine/registry.ts';
import { evaluateIsolated, evaluateMatches } from '../page/isolatedWorld.ts';
import { capturePage, insertScreenshot } from './nodes/runScreenshots.ts';

const ACTION_TIMEOUT_MS = 10_000;
/** What replaying a stored proposal needs of it. */
const proposalSteps = z.object({ startUrl: proposalSchema.shape.startUrl, steps: proposalSchema.shape.steps });
/** How long a click or scroll that stays on the page waits for it to start changing, then to go quiet. */
const CHANGE_WAIT_MS = 2_500;
const QUIET_MS = 300;

/**
 * Waits, in the page, for its document to change (a "Load more" appending items, a scroll loading
 * the next batch) and then to stay unchanged for a moment: true when it changed. The tools answer
 * only after that, so the page_model that follows sees the page as the action left it.
 */
function settleAfterAction(page: Page) {
  return evaluateIsolated(
    page,
    ([firstMs, quietMs]) =>
      new Promise<boolean>((resolve) => {
        let changed = false;
        let timer = setTimeout(() => finish(), firstMs);
        const observer = new MutationObserver(() => {
          changed = true;
          clearTimeout(timer);
          timer = setTimeout(() => finish(), quietMs);
        });
        const finish = () => {
          observer.disconnect();
          resolve(changed);
        };
        observer.observe(document.documentElement, { childList: true, subtree: true, characterData: true });
      }),
    [CHANGE_WAIT_MS, QUIET_MS] as const,
  );
}
const MAX_SNAPSHOT = 40_000;
/** How long one `walk_listing` call walks at most: it must end well within its activity's 90 s. */
const WALK_MS = 50_000;
/** How long a step of the walk waits for its control: a "more" button that is gone or disabled ends the walk. */
const WALK_ACTION_MS = 3_000;

/**
 * An aria snapshot without what is typed into fields (`- textbox "E-mail": ada@…`): values a user
 * typed in the session never reach a model, only that the field holds one.
 */
export function hideFieldValues(snapshot: string) {
  return snapshot.replace(/^(\s*- (?:textbox|searchbox|combobox|spinbutton)\b[^\n]*?):[ \t]+\S[^\n]*$/gm, '$1: [value hidden]');
}

export class AgentTabs {
  readonly #tabs = new Map<string, Page>();
  readonly #orm: MikroORM;
  readonly #serviceSecret: string;

  constructor({ orm, serviceSecret }: { orm: MikroORM; serviceSecret: string }) {
    this.#orm = orm;
    this.#serviceSecret = serviceSecret;
  }

  /** The job's tab: opened on first use at the address the prompt names, else the one the session's own tab shows. */
  async #tab(jobId: string, context: BrowserContext, startUrl: string | null) {
    const open = this.#tabs.get(jobId);
    if (open && !open.isClosed()) return open;
    const userTab = context.pages().find((page) => !page.isClosed() && ![...this.#tabs.values()].includes(page));
    const page = await context.newPage();
    this.#tabs.set(jobId, page);
    const url = startUrl ?? (userTab && /^https?:/.test(userTab.url()) ? userTab.url() : null);
    if (url) await page.goto(url, { timeout: ACTION_TIMEOUT_MS, waitUntil: 'load' }).catch(() => undefined);
    return page;
  }

  /** Runs a turn's tool calls in order and stores their results as one tool message. */
  async run(
    jobId: string,
    context: BrowserContext,
    calls: ToolCallRequest[],
    step: number,
    hide?: (values: string[]) => () => Promise<void>,
  ) {
    const em = this.#orm.em.fork();
    const job = await em.findOneOrFail(AnalysisJob, { id: jobId }, { populate: ['sealedSecrets', 'session'] });
    const { secrets, hidden } = await jobHidden(em, this.#serviceSecret, job);
    // The job's secrets stay out of the browser's log and recording while its tools type them.
    const release = hide?.(Object.values(secrets));
    try {
      await this.#runCalls(em, job, jobId, context, calls, step, secrets, hidden);
    } finally {
      await release?.();
    }
  }

  async #runCalls(
    em: ReturnType<MikroORM['em']['fork']>,
    job: AnalysisJob,
    jobId: string,
    context: BrowserContext,
    calls: ToolCallRequest[],
    step: number,
    secrets: Record<string, string>,
    hidden: Awaited<ReturnType<typeof jobHidden>>['hidden'],
  ) {
    // The first address the prompt names, without the punctuation that follows it in a sentence;
    // a password in it was sealed with the job (`https://ada:{{password}}@…`) and is put back here.
    const named = /https?:\/\/[^\s"'<>]+/.exec(job.prompt)?.[0]?.replace(/[.,;:!?)\]]+$/, '');
    const startUrl = named ? fillPlaceholders(named, { ...job.values, ...secrets }) : null;
    const page = await this.#tab(jobId, context, startUrl);
    const results = [];
    for (const call of calls) {
      let output: unknown;
      try {
        output = await this.#execute(em, job, page, call, secrets, hidden);
      } catch (error) {
        output = { error: (error instanceof Error ? error.message : String(error)).split('\n')[0] };
      }
      results.push({
        type: 'tool-result',
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        output: { type: 'json', value: output ?? null },
      });
    }
    await recordMessages(em, job, 'analysis', [{ role: 'tool', step, content: results }], hidden);
  }

  async #execute(
    em: ReturnType<MikroORM['em']['fork']>,
    job: AnalysisJob,
    page: Page,
    call: ToolCallRequest,
    secrets: Record<string, string>,
    hidden: readonly string[],
  ) {
    if (!isAnalysisTool(call.toolName)) return { error: `there is no tool ${call.toolName}` };
    const input = call.input as { selector?: string; url?: string; value?: string; key?: string; waitForLoad?: boolean };
    const selector = () => {
      if (typeof input.selector !== 'string' || !input.selector) throw new Error('selector is required');
      return input.selector;
    };
    const settle = async (waitForLoad?: boolean) => {
      if (waitForLoad) await page.waitForLoadState('load', { timeout: ACTION_TIMEOUT_MS }).catch(() => undefined);
      return { url: page.url(), title: await page.title() };
    };
    switch (call.toolName) {
      case 'page_model':
        return readPageModel(page);
      case 'aria_snapshot':
        return hideFieldValues(await page.locator('body').ariaSnapshot({ timeout: ACTION_TIMEOUT_MS })).slice(0, MAX_SNAPSHOT);
      case 'screenshot': {
        // As a run's pictures: a field or a text that holds one of the job's secrets is covered.
        const { image } = await capturePage(page, hidden, 'png');
        return { mediaType: 'image/png', base64: image.toString('base64') };
      }
      case 'query_selector': {
        const locator = page.locator(selector());
        const count = await locator.count();
        const texts = await evaluateMatches(locator, (elements) =>
          elements.slice(0, 5).map((element) => (element.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 120)),
        );
        return { count, texts };
      }
      case 'navigate': {
        if (typeof input.url !== 'string' || !/^https?:\/\//.test(input.url)) throw new Error('url must be an http(s) address');
        await page.goto(input.url, { timeout: ACTION_TIMEOUT_MS, waitUntil: 'load' });
        return settle();
      }
      case 'click': {
        const loaded = input.waitForLoad ? page.waitForEvent('load', { timeout: ACTION_TIMEOUT_MS }).catch(() => undefined) : null;
        const locator = page.locator(selector()).first();
        await locator.waitFor({ timeout: ACTION_TIMEOUT_MS });
        // Observing starts before the click, so a change it makes at once is not missed.
        const changed = input.waitForLoad ? null : settleAfterAction(page).catch(() => false);
        await locator.click({ timeout: ACTION_TIMEOUT_MS });
        await loaded;
        await changed;
        return settle(input.waitForLoad);
      }
      case 'walk_listing':
        return this.#walk(page);
      case 'select': {
        if (typeof input.value !== 'string') throw new Error('value is required');
        const target = page.locator(selector()).first();
        const changed = settleAfterAction(page).catch(() => false);
        const value = fillPlaceholders(input.value, { ...job.values, ...secrets });
        // By value, else by the option's text.
        await target
          .selectOption(value, { timeout: ACTION_TIMEOUT_MS })
          .catch(() => target.selectOption({ label: value }, { timeout: ACTION_TIMEOUT_MS }));
        return { changed: await changed, ...(await settle()) };
      }
      case 'scroll': {
        const changed = settleAfterAction(page).catch(() => false);
        await evaluateIsolated(page, () => window.scrollTo(0, document.documentElement.scrollHeight));
        return { changed: await changed, scrollHeight: await evaluateIsolated(page, () => document.documentElement.scrollHeight) };
      }
      case 'fill': {
        if (typeof input.value !== 'string') throw new Error('value is required');
        // The model wrote {{password}}; the page gets the value, the model never does.
        await page
          .locator(selector())
          .first()
          .fill(fillPlaceholders(input.value, { ...job.values, ...secrets }), { timeout: ACTION_TIMEOUT_MS });
        return { filled: selector() };
      }
      case 'press': {
        const loaded = input.waitForLoad ? page.waitForEvent('load', { timeout: ACTION_TIMEOUT_MS }).catch(() => undefined) : null;
        await page
          .locator(selector())
          .first()
          .press(typeof input.key === 'string' ? input.key : 'Enter', { timeout: ACTION_TIMEOUT_MS });
        await loaded;
        return settle(input.waitForLoad);
      }
      case 'pipeline_source': {
        const pipeline = await em.findOneOrFail(Pipeline, { id: job.pipeline.id });
        const version = pipeline.currentVersion ? await em.findOne(PipelineVersion, { id: pipeline.currentVersion.id }) : null;
        return version?.source ?? { nodes: {} };
      }
      case 'node_catalog':
        return nodeCatalog().nodes.map((node) => ({
          type: node.type,
          description: node.description,
          inputs: Object.keys(node.inputs ?? {}),
          outputs: Object.keys(node.outputs ?? {}),
        }));
    }
  }

  /**
   * Walks the listing of the page to its end in one tool call (server/agents/page/walk.ts): every
   * page, load or scroll the pagination calls for, within MAX_WALK_PAGES and WALK_MS. Answers the
   * paging that worked and each page's listings.
   */
  async #walk(page: Page) {
    const base = await readPageModel(page);
    const pages: PageModel[] = [];
    const started = Date.now();
    let failed = false;
    for (;;) {
      const { next, paging } = nextWalkStep(base, pages, failed || Date.now() - started > WALK_MS);
      if (!next) return { paging: paging ?? null, pages: pages.map(walkPage) };
      try {
        await this.#walkStep(page, next);
        pages.push(await readPageModel(page));
      } catch {
        failed = true;
      }
      if (pages.length >= MAX_WALK_PAGES) failed = true;
    }
  }

  async #walkStep(page: Page, step: WalkStep) {
    if (step.kind === 'navigate') {
      await page.goto(step.url, { timeout: ACTION_TIMEOUT_MS, waitUntil: 'load' });
      return;
    }
    const changed = settleAfterAction(page).catch(() => false);
    if (step.kind === 'click') await page.locator(step.selector).first().click({ timeout: WALK_ACTION_MS });
    else await evaluateIsolated(page, () => window.scrollTo(0, document.documentElement.scrollHeight));
    await changed;
  }

  /**
   * Pictures of the pages a finished analysis's proposal acts on: the proposal is replayed in the
   * job's tab (its gotos, fills, selects, clicks and presses, as the analysis itself did them), and
   * before each step that leaves the page, and at the end, the page is pictured with a box around
   * each element the steps on it name. Stops at the first step that cannot be replayed, keeping
   * what it has. Answers how many pictures were kept (within `maxBytes` for the job).
   */
  async pictureProposal(jobId: string, context: BrowserContext, { maxBytes, beat }: { maxBytes: number; beat: () => void }) {
    const em = this.#orm.em.fork();
    const job = await em.findOneOrFail(AnalysisJob, { id: jobId }, { populate: ['sealedSecrets', 'session'] });
    // The stored output also carries what the service added (the page models, the selectors seen).
    const proposal = proposalSteps.safeParse(job.output);
    if (!proposal.success) return 0;
    const { secrets, hidden } = await jobHidden(em, this.#serviceSecret, job);
    const fill = (text: string) => fillPlaceholders(text, { ...job.values, ...secrets });
    const page = await this.#tab(jobId, context, null);
    let kept = 0;
    let onPage: { step: number; selector: string }[] = [];
    const picture = async () => {
      if (onPage.length === 0) return;
      const named = onPage;
      onPage = [];
      await page
        .locator(named[0]?.selector as string)
        .first()
        .scrollIntoViewIfNeeded({ timeout: 2_000 })
        .catch(() => undefined);
      const boxes: ScreenshotBox[] = [];
      for (const { step, selector } of named) {
        const box = await page
          .locator(selector)
          .first()
          .boundingBox({ timeout: 1_000 })
          .catch(() => null);
        if (box) boxes.push({ step, selector, ...box });
      }
      const shot = await capturePage(page, hidden);
      const id = await insertScreenshot(
        this.#orm,
        {
          projectId: job.project.id,
          analysisId: job.id,
          node: 'proposal',
          kind: 'proposal',
          ...shot,
          boxes,
          hidden,
        },
        maxBytes,
      );
      if (id) kept++;
    };
    const { steps, startUrl } = proposal.data;
    try {
      if (steps[0]?.action !== 'goto') await page.goto(fill(startUrl), { timeout: ACTION_TIMEOUT_MS, waitUntil: 'load' });
      for (const [step, action] of steps.entries()) {
        beat();
        const target = () => page.locator(action.selector as string).first();
        if (action.action === 'goto') {
          await picture();
          await page.goto(fill(action.url ?? startUrl), { timeout: ACTION_TIMEOUT_MS, waitUntil: 'load' });
          continue;
        }
        if (action.selector) onPage.push({ step, selector: action.selector });
        if (action.action === 'fill') await target().fill(fill(action.value ?? ''), { timeout: ACTION_TIMEOUT_MS });
        if (action.action === 'select') await target().selectOption(fill(action.value ?? ''), { timeout: ACTION_TIMEOUT_MS });
        if (action.action === 'click' || action.action === 'press') {
          await picture();
          const loaded = action.waitForLoad ? page.waitForEvent('load', { timeout: ACTION_TIMEOUT_MS }).catch(() => undefined) : null;
          if (action.action === 'click') await target().click({ timeout: ACTION_TIMEOUT_MS });
          else await target().press(action.key ?? 'Enter', { timeout: ACTION_TIMEOUT_MS });
          await (loaded ?? settleAfterAction(page).catch(() => false));
        }
      }
    } catch {
      // A step that fails ends the replay with the pictures it has (docs/analysis-generation.md):
      // thrown, the activity's retry would replay the proposal, and send its forms, once more.
    } finally {
      await picture().catch(() => undefined);
    }
    return kept;
  }

  /** Closes the job's tab. */
  async release(jobId: string) {
    const page = this.#tabs.get(jobId);
    this.#tabs.delete(jobId);
    await page?.close().catch(() => undefined);
  }
}
