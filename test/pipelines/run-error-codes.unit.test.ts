import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runEndedError } from '../../server/functions/execute.ts';
import { retryableRunErrors, runErrorCodes, runFailures } from '../../workflows/contracts/pipelineRun.ts';

/**
 * The table of a run's error codes in docs/pipelines.md ("Run error codes") against the codes the
 * code gives, both ways: a code the code adds without a row, or a row for a code the code no longer
 * gives, fails; so does a row whose "start again" says otherwise than the code.
 */
function documentedCodes() {
  const doc = readFileSync(path.join(import.meta.dirname, '..', '..', 'docs', 'pipelines.md'), 'utf8');
  const section = doc.split('\n## Run error codes\n')[1]?.split('\n## ')[0];
  if (!section) throw new Error('docs/pipelines.md has no "Run error codes" section');
  const rows = section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => line.split('|').map((cell) => cell.trim()));
  return rows.map(([, code, , again]) => ({ code: (code ?? '').replaceAll('`', ''), again }));
}

describe('run error codes', () => {
  it('docs/pipelines.md lists every code a run can end with, and no other', () => {
    const documented = documentedCodes().map((row) => row.code);
    expect(new Set(documented).size, 'a code listed twice').toBe(documented.length);
    expect([...documented].sort()).toEqual([...runErrorCodes].sort());
  });

  it('says "start again" exactly for the codes a client should retry', () => {
    const rows = documentedCodes();
    for (const { again } of rows) expect(['yes', 'no']).toContain(again);
    expect(rows.filter((row) => row.again === 'yes').map((row) => row.code)).toEqual([...retryableRunErrors].sort());
    expect(retryableRunErrors).toEqual(expect.arrayContaining([runFailures.hostLost, runFailures.hostShutdown]));
  });

  it('a function execution answers every retryable code as a retryable 503 under that code, any other as 400 function_failed', () => {
    for (const code of runErrorCodes) {
      const error = runEndedError('run-1', {
        status: { pipeline: 'failed', 'pipeline-evaluation': 'failed' },
        result: null,
        nodeOutputs: {},
        outputsWithheld: false,
        error: { node: 'open', code, message: 'why' },
      });
      const expected = retryableRunErrors.includes(code) ? [503, true, code] : [400, false, 'function_failed'];
      expect([error.status, error.retryable, error.code], code).toEqual(expected);
      expect(error.issues?.[0]).toMatchObject({ path: ['nodes', 'open'], code });
    }
  });
});
