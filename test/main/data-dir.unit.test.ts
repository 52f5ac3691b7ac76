import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { securePrivateDataDir } from '../../server/infra/dataDir.ts';

/** What a start tightens in DATA_DIR (server/infra/dataDir.ts): the folder and the service's own files. */

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bf-data-dir-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const modeOf = (name: string) => statSync(path.join(dataDir, name)).mode & 0o777;

it('closes the folder and the files the service made in it, and leaves the operator’s own files as they are', () => {
  // As an earlier version left it: open to every local user.
  chmodSync(dataDir, 0o755);
  for (const name of ['jwt-secret', 'temporal.sqlite', 'temporal.sqlite-wal', 'temporal.sqlite.log', 'temporal.sqlite.pid']) {
    writeFileSync(path.join(dataDir, name), 'x', { mode: 0o644 });
  }
  // The operator's: a backup folder shared with a group, and a file meant to be read by others.
  mkdirSync(path.join(dataDir, 'backups'), { mode: 0o750 });
  chmodSync(path.join(dataDir, 'backups'), 0o750);
  writeFileSync(path.join(dataDir, 'backups', 'dump.sql'), 'x');
  chmodSync(path.join(dataDir, 'backups', 'dump.sql'), 0o640);
  writeFileSync(path.join(dataDir, 'README'), 'x');
  chmodSync(path.join(dataDir, 'README'), 0o644);

  securePrivateDataDir(dataDir);

  expect(statSync(dataDir).mode & 0o777).toBe(0o700);
  for (const name of ['jwt-secret', 'temporal.sqlite', 'temporal.sqlite-wal', 'temporal.sqlite.log', 'temporal.sqlite.pid']) {
    expect(modeOf(name), name).toBe(0o600);
  }
  expect(modeOf('backups')).toBe(0o750);
  expect(modeOf('backups/dump.sql')).toBe(0o640);
  expect(modeOf('README')).toBe(0o644);
});
