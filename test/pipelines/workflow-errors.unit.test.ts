import { WorkflowExecutionAlreadyStartedError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { repeatWhileEngineSlow } from '../../server/infra/workflowErrors.ts';

/** Starts repeated while the workflow engine is slow to answer (server/infra/workflowErrors.ts). */
describe('a start repeated while the engine is slow', () => {
  const late = () => new WorkflowUpdateRPCTimeoutOrCancelledError('Timed out waiting for the update');
  const alreadyStarted = () =>
    new WorkflowExecutionAlreadyStartedError('Workflow execution already started', 'run-1', 'pipelineRunWorkflow');

  it('answers the first try’s workflow when a repeat finds it already ended', async () => {
    const answers = [late(), alreadyStarted()];
    const started = await repeatWhileEngineSlow(
      async () => {
        throw answers.shift();
      },
      { joined: async () => 'the first try’s workflow' },
    );
    expect(started).toBe('the first try’s workflow');
  });

  it('a start refused as already started with no slow try before is a real conflict', async () => {
    await expect(
      repeatWhileEngineSlow(
        async () => {
          throw alreadyStarted();
        },
        { joined: async () => 'joined' },
      ),
    ).rejects.toBeInstanceOf(WorkflowExecutionAlreadyStartedError);
  });

  it('gives up with the engine’s own error once the budget is spent; other errors are not repeated', async () => {
    let tries = 0;
    await expect(
      repeatWhileEngineSlow(
        async () => {
          tries++;
          throw late();
        },
        { budgetMs: 700 },
      ),
    ).rejects.toBeInstanceOf(WorkflowUpdateRPCTimeoutOrCancelledError);
    expect(tries).toBeGreaterThan(1);
    let once = 0;
    await expect(
      repeatWhileEngineSlow(async () => {
        once++;
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(once).toBe(1);
  });

  it('logs each repeat as a warning naming the call; a first try that answers logs nothing', async () => {
    const warnings: { fields: object; message: string }[] = [];
    const log = { warn: (fields: object, message: string) => void warnings.push({ fields, message }) };
    const answers = [late(), late()];
    const answered = await repeatWhileEngineSlow(
      async () => {
        const next = answers.shift();
        if (next) throw next;
        return 'started';
      },
      { log, what: 'the start of run 1' },
    );
    expect(answered).toBe('started');
    expect(warnings.map(({ message }) => message)).toEqual([
      'the workflow engine was slow to answer the start of run 1: repeating it in 200 ms',
      'the workflow engine was slow to answer the start of run 1: repeating it in 400 ms',
    ]);
    expect(warnings[1]?.fields).toMatchObject({ try: 2, reason: 'Timed out waiting for the update' });

    warnings.length = 0;
    await repeatWhileEngineSlow(async () => 'at once', { log, what: 'the start of run 2' });
    expect(warnings).toEqual([]);
  });
});
