import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startDevTemporal } from '../../server/infra/devTemporal.ts';
import { freePort } from '../../server/infra/ports.ts';
import { createLogger } from '../../server/logger.ts';
import { bundleWorkflows } from '../../server/main/controlWorker.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    workflowBundlePath: string;
  }
}

/**
 * One Temporal dev server (in memory) and one workflow bundle for the whole run; every test
 * file gets its own database, worker task queue and app on top of them.
 */
export default async function setup(project: TestProject) {
  const log = createLogger({ logLevel: 'warn' });
  const temporal = await startDevTemporal({ cliPath: process.env.TEMPORAL_CLI_PATH, port: await freePort(), log });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bf-test-'));
  const bundlePath = path.join(dir, 'workflows.js');
  writeFileSync(bundlePath, (await bundleWorkflows()).code);
  project.provide('temporalAddress', temporal.address);
  project.provide('workflowBundlePath', bundlePath);
  return async () => {
    await temporal.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}
