import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * DATA_DIR holds the service's private files: the generated JWT secret and the Temporal dev
 * server's history, log and pid file. The folder is 0700 and what is in it 0600 (folders 0700), so
 * no other local user can read them. What another user must reach lives beside it instead, in
 * `<DATA_DIR>-shared` (config.sharedDataDir): embedded PostgreSQL's cluster, which runs as the
 * `postgres` user when the service is root, and the browsers' folders, which the sandbox's user
 * mounts by path. Each of those guards itself with its own folder's modes; were they in DATA_DIR,
 * DATA_DIR would have to be open (o+x) to those users, and so to every user.
 */

/** Creates DATA_DIR 0700, or closes one an earlier start left open, with everything in it. */
export function securePrivateDataDir(dataDir: string) {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  closeToOthers(dataDir);
}

function closeToOthers(dir: string) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isSymbolicLink()) continue;
    const file = path.join(dir, entry.name);
    const mode = lstatSync(file).mode & 0o7777;
    if (mode & 0o077) chmodSync(file, mode & ~0o077);
    if (entry.isDirectory()) closeToOthers(file);
  }
}

/** `<DATA_DIR>-shared`, created 0711: other users may pass through to what is theirs, not list it. */
export function prepareSharedDataDir(sharedDataDir: string) {
  mkdirSync(sharedDataDir, { recursive: true, mode: 0o711 });
  return sharedDataDir;
}
