import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { sharedDataDirOf } from '../server/config.ts';
import { startEmbeddedPostgres } from '../server/infra/embeddedPostgres.ts';
import { freePort } from '../server/infra/ports.ts';
import { createLogger } from '../server/logger.ts';

/**
 * Embedded PostgreSQL's cluster lives beside the private DATA_DIR (server/infra/dataDir.ts); one
 * an earlier version kept in DATA_DIR/postgres moves there, data and all.
 */

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bf-pg-layout-'));
const log = createLogger({ logLevel: 'warn' });
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(sharedDataDirOf(dataDir), { recursive: true, force: true });
});

async function query(url: string, text: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

it('moves a cluster an earlier version left in DATA_DIR beside it, and its data comes along', { timeout: 180_000 }, async () => {
  // The earlier layout: the cluster in DATA_DIR itself, which the postgres user (as root) had to enter.
  chmodSync(dataDir, 0o711);
  const earlier = await startEmbeddedPostgres({ dataDir, sharedDataDir: dataDir, embeddedPostgresPort: await freePort() }, log);
  await query(earlier.url, 'create table kept (note text); insert into kept values ($$from before$$)');
  await earlier.stop();
  expect(existsSync(path.join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true);

  chmodSync(dataDir, 0o700);
  const now = await startEmbeddedPostgres(
    { dataDir, sharedDataDir: sharedDataDirOf(dataDir), embeddedPostgresPort: await freePort() },
    log,
  );
  try {
    expect(await query(now.url, 'select note from kept')).toEqual([{ note: 'from before' }]);
    expect(existsSync(path.join(dataDir, 'postgres'))).toBe(false);
    expect(existsSync(path.join(sharedDataDirOf(dataDir), 'postgres', 'PG_VERSION'))).toBe(true);
  } finally {
    await now.stop();
  }
});
