import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createScratchDatabase } from '../../scripts/scratch-database.ts';
import { sharedDataDirOf } from '../../server/config.ts';
import { freePort } from '../../server/infra/ports.ts';
import { groupAlive, processesMentioning, projectRoot, spawnService } from '../support/processes.ts';
import { testDatabaseBase } from '../support/stack.ts';

/**
 * `npm start` whose npm is killed outright (kill -9: no signal reaches the service, and npm
 * forwards none): npm cannot exec the service, so it is the service's parent, and the service
 * notices its parent gone and shuts down as on Ctrl-C (server/infra/parentDeath.ts,
 * `whenParentEnds`). Nothing of it is left: not the node process, not its browsers.
 */

const START_TIMEOUT_MS = 240_000;
/** Its shutdown's own bound (server/main/start.ts, 9 s) and the parent check's 250 ms, with room. */
const GONE_WITHIN_MS = 12_000;

let database: Awaited<ReturnType<typeof createScratchDatabase>> | undefined;
let dataDir: string | undefined;
let npmPid: number | undefined;

afterAll(async () => {
  if (npmPid && groupAlive(npmPid)) process.kill(-npmPid, 'SIGKILL');
  if (dataDir) {
    for (const pid of processesMentioning(sharedDataDirOf(dataDir))) process.kill(pid, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(sharedDataDirOf(dataDir), { recursive: true, force: true });
  }
  await database?.drop();
}, 60_000);

/** The parent pid of `pid`, from /proc (field 4 of its stat, after the command in parentheses). */
const parentOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);

describe('npm start, its npm killed', () => {
  it('leaves nothing running: the service sees npm gone and shuts down, its browsers with it', {
    timeout: START_TIMEOUT_MS + 60_000,
  }, async () => {
    database = await createScratchDatabase(testDatabaseBase, 'bfnpmkill');
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'bf-npm-killed-'));
    const queue = `npmkill-${randomBytes(6).toString('hex')}`;
    const port = await freePort();
    const app = spawnService('npm', ['start', '--silent'], {
      ...process.env,
      PATH: `${path.join(projectRoot, 'node_modules/.bin')}${path.delimiter}${process.env.PATH ?? ''}`,
      npm_config_update_notifier: 'false',
      NODE_ENV: 'development',
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: queue,
      BROWSER_HOST_ID: `host-${queue}`,
      // One warm browser: a Chromium that must not outlive the service either.
      BROWSER_WARM_POOL: '1',
      JWT_SECRET: randomBytes(32).toString('hex'),
      RATE_LIMITS: 'off',
      LOG_LEVEL: 'info',
    });
    npmPid = app.child.pid as number;
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline && app.child.exitCode === null && !app.output().includes('API ready at')) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(app.output().includes('API ready at'), app.output().slice(-4000)).toBe(true);
    const browsers = sharedDataDirOf(dataDir);
    await expect.poll(() => processesMentioning(browsers).length, { timeout: 60_000, interval: 250 }).toBeGreaterThan(0);
    // npm's child is the service itself (the script execs node): npm is its parent.
    const service = processesMentioning('server/main/start.ts').filter((pid) => {
      try {
        return parentOf(pid) === npmPid;
      } catch {
        return false;
      }
    });
    expect(service, 'the service runs as npm’s child').toHaveLength(1);

    const killedAt = Date.now();
    process.kill(npmPid, 'SIGKILL');
    await app.exited;
    while ((groupAlive(npmPid) || processesMentioning(browsers).length) && Date.now() - killedAt < 30_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const tookMs = Date.now() - killedAt;
    expect(groupAlive(npmPid), `the service outlived npm:\n${app.output().slice(-4000)}`).toBe(false);
    expect(processesMentioning(browsers), 'no browser outlives the service').toEqual([]);
    expect(tookMs, app.output().slice(-4000)).toBeLessThan(GONE_WITHIN_MS);
    expect(app.output()).toContain('the process that started this one (npm) ended: shutting down');
    expect(app.output()).not.toContain('shutdown still under way');
  });
});
