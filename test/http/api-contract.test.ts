import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import { projectRoot } from '../support/processes.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * The fuzzing gate: schemathesis (pinned in test/contract/requirements.txt, installed by
 * scripts/setup.sh) generates requests from /api/openapi.json and holds every answer to the
 * document: no 5xx, only documented statuses and content types, bodies matching their schemas.
 * Stateful links (inferred from the document) give operations ids that exist. The budget fits CI;
 * CONTRACT_MAX_EXAMPLES and CONTRACT_MAX_TIME make the long run of docs/api-contract.md;
 * CONTRACT_CHECKS and CONTRACT_MODE (positive, negative, all) narrow a run while investigating.
 */

const schemathesis = path.join(projectRoot, '.venv-contract/bin/st');
const maxExamples = Number(process.env.CONTRACT_MAX_EXAMPLES ?? 15);
const maxTimeSeconds = Number(process.env.CONTRACT_MAX_TIME ?? 150);
const checks = process.env.CONTRACT_CHECKS?.split(',') ?? [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_schema_conformance',
];

let stack: TestStack;
const reports = mkdtempSync(path.join(os.tmpdir(), 'bf-contract-'));
beforeAll(async () => {
  // A real browser host, so session starts start browsers; few of them, on two cores.
  stack = await startTestStack({ BROWSERS_PER_PROJECT: '2', BROWSERS_PER_HOST: '3' }, { browserHost: true });
});
afterAll(async () => {
  await stack?.close();
  rmSync(reports, { recursive: true, force: true });
});

type Run = { code: number | null; output: string; cases: number };

/** One schemathesis run against the stack with `header`; its output, exit code and case count. */
function runSchemathesis(
  name: string,
  options: { header: string; projects: [string, string]; include?: string; maxTime: number },
): Promise<Run> {
  const report = path.join(reports, `${name}.ndjson`);
  const args = [
    '--config-file',
    path.join(projectRoot, 'test/contract/schemathesis.toml'),
    'run',
    `${stack.url}/api/openapi.json`,
    '--checks',
    checks.join(','),
    '--header',
    options.header,
    '--phases',
    'examples,coverage,fuzzing,stateful',
    '--max-examples',
    String(maxExamples),
    '--max-time',
    String(options.maxTime),
    '--workers',
    '2',
    '--seed',
    process.env.CONTRACT_SEED ?? '20261125',
    '--request-timeout',
    '60',
    '--report',
    'ndjson',
    '--report-ndjson-path',
    report,
    '--output-truncate',
    'false',
    '--mode',
    process.env.CONTRACT_MODE ?? 'all',
    ...(options.include ? ['--include-path-regex', options.include] : []),
  ];
  const [project, doomed] = options.projects;
  const env = { ...process.env, NO_COLOR: '1', COLUMNS: '160', CONTRACT_PROJECT: project, CONTRACT_DOOMED_PROJECT: doomed };
  return new Promise((resolve, reject) => {
    const child = spawn(schemathesis, args, { cwd: reports, env });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output, cases: countCases(report) }));
  });
}

/**
 * A schemathesis run that stopped on a fault of the Python it runs on, not of the API: CPython
 * 3.11's ast.parse, called by Hypothesis to describe a filter while two workers draw, can fail with
 * "AST constructor recursion depth mismatch" (python/cpython#106905), which schemathesis reports as
 * a runtime error of the run. Such a run is made once more; any other failure stands.
 */
async function runPastPythonFault(name: string, options: Parameters<typeof runSchemathesis>[1]) {
  const run = await runSchemathesis(name, options);
  if (run.code === 0 || !run.output.includes('AST constructor recursion depth mismatch')) return run;
  console.log(`schemathesis (${name}) stopped on CPython's AST recursion fault, not the API's: running it again`);
  return runSchemathesis(`${name}-again`, options);
}

/** Test cases the run sent, from its ndjson events (one ScenarioFinished per scenario, with its cases). */
function countCases(report: string) {
  if (!existsSync(report)) return 0;
  let cases = 0;
  for (const line of readFileSync(report, 'utf8').split('\n')) {
    if (!line.includes('ScenarioFinished')) continue;
    const event = JSON.parse(line) as { ScenarioFinished?: { recorder?: { cases?: Record<string, unknown> } } };
    cases += Object.keys(event.ScenarioFinished?.recorder?.cases ?? {}).length;
  }
  return cases;
}

/**
 * What a run printed last: its summary, with the count of cases. Its pytest-style rule lines
 * ("=== 3 warnings in 75s ===") are left out: CI reads such a line as a pytest run of no tests.
 */
const summary = (run: Run) =>
  run.output
    .split('\n')
    .slice(-30)
    .filter((line) => !/^=+ .* =+$/.test(line.trim()))
    .join('\n');

describe('the OpenAPI document holds under schemathesis', () => {
  it('with a full API key: no server error, and every status, content type and body as documented', {
    // Room for the one repeat of runPastPythonFault.
    timeout: (2 * maxTimeSeconds + 180) * 1000,
  }, async () => {
    expect(existsSync(schemathesis), 'schemathesis is installed by scripts/setup.sh into .venv-contract').toBe(true);
    const user = await registerUser(stack);
    const project = await createProject(stack, user.token);
    const doomed = await createProject(stack, user.token);
    const key = await createApiKey(stack, user.token, { accessType: 'full' });
    const run = await runPastPythonFault('api-key', {
      header: `x-api-key: ${key.secret}`,
      projects: [project.slug, doomed.slug],
      maxTime: maxTimeSeconds,
    });
    console.log(`schemathesis with an API key: ${run.cases} cases\n${summary(run)}`);
    expect(run.code, run.output.slice(-20_000)).toBe(0);
    expect(run.cases).toBeGreaterThan(1000);
  });

  it('signed in: the account routes an API key may not use, as documented', {
    timeout: (maxTimeSeconds + 180) * 1000,
  }, async () => {
    const user = await registerUser(stack);
    const project = await createProject(stack, user.token);
    const doomed = await createProject(stack, user.token);
    const run = await runPastPythonFault('session', {
      header: `authorization: Bearer ${user.token}`,
      projects: [project.slug, doomed.slug],
      // The account's own routes; the project routes are the API key run's. Signing out would
      // end the session the run uses.
      include: '^/api/(?!auth/logout)',
      maxTime: Math.ceil(maxTimeSeconds / 2),
    });
    console.log(`schemathesis signed in: ${run.cases} cases\n${summary(run)}`);
    expect(run.code, run.output.slice(-20_000)).toBe(0);
    expect(run.cases).toBeGreaterThan(500);
  });
});
