import { chmodSync, existsSync, lstatSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * DATA_DIR holds the service's private files: the generated JWT secret and the Temporal dev
 * server's history, log and pid file. The folder is 0700 and those files 0600, so no other local
 * user can read them. What another user must reach lives beside it instead, in
 * `<DATA_DIR>-shared` (config.sharedDataDir): embedded PostgreSQL's cluster, which runs as the
 * `postgres` user when the service is root, and the browsers' folders, which the sandbox's user
 * mounts by path. Each of those guards itself with its own folder's modes; were they in DATA_DIR,
 * DATA_DIR would have to be open (o+x) to those users, and so to every user.
 */

/** The generated JWT secret's file in DATA_DIR. */
export const JWT_SECRET_FILE = 'jwt-secret';
/** The Temporal dev server's history in DATA_DIR; its log, pid file and SQLite's own files are named after it. */
export const TEMPORAL_DB_FILE = 'temporal.sqlite';
const TEMPORAL_FILES = ['', '-wal', '-shm', '-journal', '.log', '.pid'].map((suffix) => `${TEMPORAL_DB_FILE}${suffix}`);

/**
 * Creates DATA_DIR 0700, or closes one an earlier start left open, with the files the service
 * made in it. What else is there is the operator's (a backup, a mounted file): the folder's 0700
 * already keeps other users from it, and its modes are left as they are.
 */
export function securePrivateDataDir(dataDir: string) {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  for (const name of [JWT_SECRET_FILE, ...TEMPORAL_FILES]) {
    const file = path.join(dataDir, name);
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(file);
    } catch {
      continue;
    }
    // A link is the operator's: chmod would change what it points to.
    if (!stat.isFile()) continue;
    const mode = stat.mode & 0o7777;
    if (mode & 0o077) chmodSync(file, mode & ~0o077);
  }
}

/** `<DATA_DIR>-shared`, created 0711: other users may pass through to what is theirs, not list it. */
export function prepareSharedDataDir(sharedDataDir: string) {
  mkdirSync(sharedDataDir, { recursive: true, mode: 0o711 });
  return sharedDataDir;
}

/**
 * Why `<DATA_DIR>-shared` may not keep what is put there, or undefined: when DATA_DIR is a
 * filesystem of its own (a container volume mounted on it), its sibling is not on that volume but
 * on the filesystem around it, which in a container is gone with the container.
 */
export function sharedDataDirCaveat(dataDir: string, sharedDataDir: string) {
  if (!existsSync(dataDir) || !existsSync(sharedDataDir)) return undefined;
  if (statSync(dataDir).dev === statSync(sharedDataDir).dev) return undefined;
  return (
    `DATA_DIR (${dataDir}) and ${sharedDataDir} are on different filesystems: if DATA_DIR is a volume, ` +
    `${sharedDataDir} (embedded PostgreSQL's data, the browsers' folders) is not on it and may not outlive the container. ` +
    `Mount a volume on ${sharedDataDir} too, or one on the folder holding both (${path.dirname(dataDir)}).`
  );
}
