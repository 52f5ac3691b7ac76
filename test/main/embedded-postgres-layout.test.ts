import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { sharedDataDirOf } from '../../server/config.ts';
import { startEmbeddedPostgres } from '../../server/infra/embeddedPostgres.ts';
import { freePort } from '../../server/infra/ports.ts';
import { createLogger } from '../../server/logger.ts';
import { capturingLog } from '../support/capturingLog.ts';

/**
 * Embedded PostgreSQL's cluster lives beside the private DATA_DIR (server/infra/dataDir.ts); one
 * an earlier version kept in DATA_DIR/postgres moves there, data and all.
 */

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bf-pg-layout-'));
const log = createLogger({ logLevel: 'warn' });
const made: string[] = [dataDir, sharedDataDirOf(dataDir)];
afterAll(() => {
  for (const folder of made) rmSync(folder, { recursive: true, force: true });
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

/** A filesystem other than the one of the temporary folder: DATA_DIR as a volume of its own. */
const otherFilesystem = '/dev/shm';
const twoFilesystems = existsSync(otherFilesystem) && statSync(otherFilesystem).dev !== statSync(os.tmpdir()).dev;

it.runIf(twoFilesystems)(
  'with DATA_DIR on a filesystem of its own, copies the earlier cluster across and warns that the folder beside it is not on it',
  { timeout: 180_000 },
  async () => {
    const volume = mkdtempSync(path.join(otherFilesystem, 'bf-pg-volume-'));
    // Where its sibling would be, on the filesystem around the volume.
    const around = mkdtempSync(path.join(os.tmpdir(), 'bf-pg-around-'));
    const shared = path.join(around, 'data-shared');
    made.push(volume, around);
    chmodSync(around, 0o711);
    chmodSync(volume, 0o711);
    const earlier = await startEmbeddedPostgres({ dataDir: volume, sharedDataDir: volume, embeddedPostgresPort: await freePort() }, log);
    await query(earlier.url, 'create table kept (note text); insert into kept values ($$from the volume$$)');
    await earlier.stop();

    chmodSync(volume, 0o700);
    const { log: watched, lines } = capturingLog();
    const now = await startEmbeddedPostgres({ dataDir: volume, sharedDataDir: shared, embeddedPostgresPort: await freePort() }, watched);
    try {
      expect(await query(now.url, 'select note from kept')).toEqual([{ note: 'from the volume' }]);
      expect(existsSync(path.join(volume, 'postgres'))).toBe(false);
      const warnings = lines.filter((line) => line.level === 40).map((line) => line.msg);
      expect(warnings).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/are on different filesystems: .*Mount a volume on .*-shared too/),
          expect.stringMatching(/^moved embedded PostgreSQL's data/),
        ]),
      );
    } finally {
      await now.stop();
    }
  },
);
