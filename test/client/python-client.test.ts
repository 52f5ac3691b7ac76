import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../support/processes.ts';
import { tokenFromMail } from '../support/smtp.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * The OpenAPI document is usable as written by another language: openapi-python-client (pinned in
 * test/contract/requirements.txt) generates a Python client from the served document, and a
 * Python script drives it through a user's first steps (test/contract/python_client_flow.py).
 */

const venv = path.join(projectRoot, '.venv-contract/bin');

let stack: TestStack;
const scratch = mkdtempSync(path.join(os.tmpdir(), 'bf-python-client-'));
beforeAll(async () => {
  stack = await startTestStack({}, { browserHost: true });
});
afterAll(async () => {
  await stack?.close();
  rmSync(scratch, { recursive: true, force: true });
});

type Step = { step: string; [field: string]: unknown };

describe('a client generated for Python', () => {
  it('registers, verifies, creates a project and a key, starts and stops a browser, and reads an error', {
    timeout: 180_000,
  }, async () => {
    expect(existsSync(path.join(venv, 'openapi-python-client')), 'scripts/setup.sh installs it into .venv-contract').toBe(true);
    const document = await fetch(`${stack.url}/api/openapi.json`);
    expect(document.status).toBe(200);
    const documentFile = path.join(scratch, 'openapi.json');
    writeFileSync(documentFile, await document.text());

    const generated = spawnSync(
      path.join(venv, 'openapi-python-client'),
      [
        'generate',
        '--path',
        documentFile,
        '--config',
        path.join(projectRoot, 'test/contract/python-client.yml'),
        '--output-path',
        path.join(scratch, 'browserflow_api_client'),
        '--meta',
        'none',
      ],
      { cwd: scratch, encoding: 'utf8', env: { ...process.env, PATH: `${venv}:${process.env.PATH}` } },
    );
    const generatorSaid = `${generated.stdout}${generated.stderr}`;
    expect(generated.status, generatorSaid).toBe(0);
    // Every operation and schema became code: the generator warns of anything it had to skip.
    expect(generatorSaid, generatorSaid).not.toMatch(/warning|skipping|unable/i);

    const email = `py-${randomBytes(4).toString('hex')}@example.test`;
    const flow = spawn(path.join(venv, 'python'), [path.join(projectRoot, 'test/contract/python_client_flow.py'), stack.url, email], {
      env: { ...process.env, PYTHONPATH: scratch },
    });
    let stderr = '';
    flow.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => flow.once('exit', resolve));
    const steps: Step[] = [];
    for await (const line of createInterface({ input: flow.stdout })) {
      const step = JSON.parse(line) as Step;
      steps.push(step);
      if (step.step === 'awaiting verification token') {
        const mail = await stack.smtp.waitFor((m) => m.to.includes(email) && /verify/i.test(m.subject));
        flow.stdin.write(`${tokenFromMail(mail)}\n`);
      }
    }
    expect(await exited, stderr).toBe(0);

    const byName = Object.fromEntries(steps.map((step) => [step.step, step]));
    expect(byName.registered).toMatchObject({ status: 'email_not_verified' });
    expect(byName.verified).toMatchObject({ status: 'ok' });
    expect(byName['key created']).toMatchObject({ secretLooksRight: true });
    expect(byName['project read']).toMatchObject({ name: 'From Python' });
    expect(byName['browser started']).toMatchObject({ status: 'running', hasRemoteUrl: true });
    expect(['stopping', 'stopped']).toContain(byName['browser stopped']?.status);
    expect(byName['browser stopped']).toMatchObject({ ended: 'stopped' });
    expect(byName['error read']).toMatchObject({ status: 'error', code: 'not_found' });
    expect(String(byName['error read']?.message)).toMatch(/not found/i);
  });
});
