import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * What a process main says when it cannot start for a reason the operator must fix: one line per
 * problem, no stack trace.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const node = path.join(root, 'node_modules/.bin/node');

function run(script: string, env: Record<string, string>, nodeBinary = node) {
  const result = spawnSync(nodeBinary, [script], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('a bad configuration', () => {
  it.each(['server/main/api.ts', 'server/main/worker.ts', 'server/main/browserHost.ts', 'server/main/migrate.ts', 'server/main/start.ts'])(
    '%s exits 1 with the config message and no stack trace',
    (script) => {
      const { status, output } = run(script, { PORT: 'not-a-port', NODE_ENV: 'production' });
      expect(status, output).toBe(1);
      expect(output).toContain('Invalid configuration:');
      expect(output).toMatch(/PORT: /);
      expect(output).not.toMatch(/^\s+at /m);
    },
  );
});

const systemNode = '/usr/bin/node';
const systemMajor = existsSync(systemNode) ? Number(spawnSync(systemNode, ['-p', 'process.versions.node.split(".")[0]']).stdout) : 0;

describe('scripts/check-node.mjs', () => {
  it('passes on the project Node', () => {
    expect(run('scripts/check-node.mjs', {}).status).toBe(0);
  });

  it.runIf(systemMajor > 0 && systemMajor < 24)('says an older Node is too old instead of failing to load', () => {
    const { status, output } = run('scripts/check-node.mjs', {}, systemNode);
    expect(status).toBe(1);
    expect(output).toMatch(/^Node \d+\.\d+\.\d+ is too old; this project runs on Node 24/);
  });
});
