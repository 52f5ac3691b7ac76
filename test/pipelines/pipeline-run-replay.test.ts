import { readFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createProject, registerUser } from '../support/accounts.ts';
import { startTestSite } from '../support/pages.ts';
import { createPipeline, settledRun } from '../support/pipelines.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Runs in flight when a new worker version is deployed are continued by the new code, which
 * replays their history first: it must make the same decisions. `pipelineRunWorkflow` keeps the
 * per-node path for runs without the `run-stretches` marker (workflows/pipelineRun.ts).
 *
 * The fixture is the history of a run executed by the worker code before stretches existed
 * (commit a0f255d): browser nodes, a pure node, a loop over pure nodes, a condition with a
 * browser node inside, a secret argument.
 */
const PER_NODE_HISTORY = path.join(import.meta.dirname, '..', 'fixtures', 'pipeline-run-per-node.history.bin');

let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
const workflowBundle = () => ({ code: readFileSync(inject('workflowBundlePath'), 'utf8') });

/** The activity types a history scheduled, and the markers it recorded. */
function commandsOf(history: temporal.api.history.v1.IHistory) {
  const events = history.events ?? [];
  return {
    activities: events.flatMap((event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? []),
    markers: events.flatMap((event) => event.markerRecordedEventAttributes?.markerName ?? []),
  };
}

beforeAll(async () => {
  stack = await startTestStack({}, { browserHost: true });
  site = await startTestSite();
});
afterAll(async () => {
  await site?.close();
  await stack?.close();
});

describe('pipeline runs across a worker upgrade', () => {
  it('replays a run that the worker code before stretches executed, one activity per node', async () => {
    const history = temporal.api.history.v1.History.decode(readFileSync(PER_NODE_HISTORY));
    // It is what it says: node activities, remote bookkeeping, no marker of the new path.
    const { activities, markers } = commandsOf(history);
    expect(activities).toEqual(expect.arrayContaining(['markRun', 'runBrowserNode', 'runPureNode', 'finishRun']));
    expect(markers).toEqual([]);
    await Worker.runReplayHistory({ workflowBundle: workflowBundle() }, history, 'run-per-node');
  });

  it('replays a run of stretches', async () => {
    const owner = await registerUser(stack);
    const as = { token: owner.token };
    const project = await createProject(stack, owner.token);
    const session = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'replay' }, as);
    const pipelineId = await createPipeline(stack, project.slug, as, {
      nodes: {
        page: { type: 'browser.page' },
        open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/replay` } },
        heading: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: '#greeting' } },
        each: {
          type: 'flow.forEach',
          inputs: { items: { $literal: ['a', 'b'] } },
          body: {
            nodes: { item: { type: 'text.template', inputs: { template: 'item {{x}}', x: { $ref: 'each.item' } } } },
            outputs: { item: { $ref: 'item.text' } },
          },
        },
        line: { type: 'text.template', inputs: { template: '{{h}} {{n}}', h: { $ref: 'heading.text' }, n: { $ref: 'each.count' } } },
      },
      outputs: { line: { $ref: 'line.text' }, items: { $ref: 'each.item' } },
    });
    const started = await stack.http.post(`/${project.slug}/api/pipelines/${pipelineId}/start`, { session: session.body.id }, as);
    expect(started.status, started.text).toBe(200);
    const run = await settledRun(stack, `/${project.slug}/api/pipelines/${pipelineId}/${started.body.id}`, as);
    expect(run.status.pipeline, JSON.stringify(run.error)).toBe('succeeded');
    expect(run.result).toEqual({ line: 'Hello from the test site 2', items: ['item a', 'item b'] });

    const handle = stack.temporal.workflow.getHandle(`run-${started.body.id}`);
    await handle.result();
    const history = await handle.fetchHistory();
    const { activities, markers } = commandsOf(history);
    // One activity for the three nodes before the loop; the loop's and the last node's stretches
    // and the bookkeeping are local activities (markers); releasing the tabs is the last activity.
    expect(activities).toEqual(['runBrowserStretch', 'releaseRunPages']);
    expect(markers).toContain('core_patch');
    await Worker.runReplayHistory({ workflowBundle: workflowBundle() }, history, 'run-stretches');
  });
});
