import { execFile } from 'node:child_process';
import { chownSync, closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { NewLogEntry } from '../../../logs/logWriter.ts';
import type { CdpMux } from '../relay/cdpMux.ts';

/**
 * A persisted session's profile on its host (docs/sessions-and-proxies.md, "Profiles that
 * persist"): the parts of Chromium's profile folder that hold a site's state, packed into a
 * gzip'd tar after Chromium closed (and flushed) them, and unpacked into a new profile before
 * Chromium starts. Cookies are encrypted with the OS crypt key, which `--password-store=basic`
 * fixes, so the files move between hosts.
 *
 * In the sandbox the profile is a tmpfs that dies with the browser's namespace, so the sandbox's
 * own shell does both (`sandboxProfileScript`), through a folder of the host's bound into the
 * sandbox at `PROFILE_RUN_DIR`: the archive to restore is put there before the launch, and the
 * saved one is found there once the sandbox has exited. Without the sandbox the host runs the
 * same `tar` on the profile folder itself.
 */

/**
 * What is kept, relative to the profile folder (what Chromium 156 writes): cookies, localStorage,
 * IndexedDB, service workers (their registrations and scripts) and the storage buckets' metadata.
 * Caches are left out: the HTTP cache, code caches, and CacheStorage (`PROFILE_EXCLUDES`).
 */
export const PROFILE_PARTS = [
  'Default/Cookies',
  'Default/Cookies-journal',
  'Default/Local Storage',
  'Default/IndexedDB',
  'Default/Service Worker',
  'Default/WebStorage',
];
/** Left out wherever they are: the Cache API's storage (also inside Service Worker and WebStorage). */
export const PROFILE_EXCLUDES = ['CacheStorage'];

/** Inside the sandbox: where the host's folder of a persisted profile appears. */
export const PROFILE_RUN_DIR = '/run/browserflow-profile';
const RESTORE = 'restore.tar.gz';
const SAVE_ASKED = 'save';
const SAVED = 'saved.tar.gz';

/** How long a stop waits for Chromium (and in the sandbox, the archive) after Chromium's close. */
const EXIT_WAIT_MS = 10_000;
const COOKIES_MS = 5_000;

const run = promisify(execFile);

/** A persisted profile asked for at launch: the archive of the last stop, or null for a fresh one. */
export type PersistedProfile = { archive: Buffer | null };

/** What a stop of a persisted browser leaves: the archive (none when it could not be made or was too large), its cookies, and what to log. */
export type SavedProfile = { archive?: Buffer; cookies?: unknown[]; note: NewLogEntry };

/** What of a launched browser (../chromium/chromiumProcess.ts, LaunchedBrowser) a save reads. */
type PersistedBrowser = {
  userDataDir: string;
  mux?: CdpMux;
  ended?: Promise<void>;
  persisted?: { dir: string; sandboxed: boolean };
};

function quote(value: string) {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

function tarSaveArgs(profileDir: string, out: string) {
  return ['-C', profileDir, '--ignore-failed-read', ...PROFILE_EXCLUDES.map((name) => `--exclude=${name}`), '-czf', out, ...PROFILE_PARTS];
}

function tarRestoreArgs(archive: string, profileDir: string) {
  return ['-xzf', archive, '-C', profileDir, '--no-same-owner', '--no-same-permissions'];
}

/**
 * The sandbox's shell around Chromium for a persisted profile: `restore` runs before Chromium
 * (a saved archive that cannot be unpacked fails the launch, saying so: never a half profile),
 * `run` starts Chromium and, once it has exited after a stop that asked for it, packs the profile
 * (written as a part, then renamed: the host never reads half an archive).
 */
export function sandboxProfileScript(profileDir: string) {
  const dir = PROFILE_RUN_DIR;
  const saveArgs = tarSaveArgs(profileDir, `${dir}/${SAVED}.part`).map(quote).join(' ');
  const restoreArgs = tarRestoreArgs(`${dir}/${RESTORE}`, profileDir).map(quote).join(' ');
  return {
    restore: `if [ -f ${dir}/${RESTORE} ]; then tar ${restoreArgs} || { echo 'the saved profile could not be unpacked' >&2; exit 1; }; fi; `,
    run: `"$@"; code=$?; if [ -f ${dir}/${SAVE_ASKED} ]; then tar ${saveArgs} && mv ${dir}/${SAVED}.part ${dir}/${SAVED}; fi; exit $code`,
  };
}

/**
 * Makes the host's folder of a persisted profile (`<browser folder>/persisted`), with the archive
 * to restore in it. In the sandbox it belongs to the sandbox's user, which reads it there; without
 * one the archive is unpacked into the profile folder at once.
 */
export async function prepareProfile(
  folder: string,
  userDataDir: string,
  profile: PersistedProfile,
  sandbox: { uid: number; gid: number } | null,
) {
  const dir = path.join(folder, 'persisted');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (profile.archive) {
    const archive = path.join(dir, RESTORE);
    writeFileSync(archive, profile.archive, { mode: 0o600 });
    if (sandbox) chownSync(archive, sandbox.uid, sandbox.gid);
    else await run('tar', tarRestoreArgs(archive, userDataDir));
  }
  if (sandbox) chownSync(dir, sandbox.uid, sandbox.gid);
  return dir;
}

/**
 * Closes a persisted browser and packs its profile: its cookies read first (for the session's
 * stored `cookies`), then Chromium's own close (which flushes its files), its exit awaited, the
 * archive read and held to `maxBytes`. A browser that is already gone (it crashed) leaves no
 * archive: the one saved before is kept. Whatever happens is in `note`, for the resource's log.
 */
export async function closeAndSave(browser: PersistedBrowser, maxBytes: number): Promise<SavedProfile> {
  const { mux, persisted } = browser;
  if (!persisted) return { note: notSaved('the browser was launched without its profile') };
  const profileDir = persisted.dir;
  const answer = await mux?.command('Storage.getCookies', {}, COOKIES_MS).catch(() => null);
  const cookies = (answer?.result as { cookies?: unknown[] } | undefined)?.cookies;
  if (!mux || !cookies) return { note: notSaved('the browser had already ended (it was not stopped)') };
  writeFileSync(path.join(profileDir, SAVE_ASKED), '');
  await mux.command('Browser.close', {}, 5_000).catch(() => {});
  const exited = await Promise.race([browser.ended?.then(() => true), sleep(EXIT_WAIT_MS, false)]);
  if (!exited) return { cookies, note: notSaved(`Chromium did not exit within ${EXIT_WAIT_MS / 1000} s of its close`) };
  const saved = path.join(profileDir, SAVED);
  // Without the sandbox the profile folder is the host's: packed here (a part, renamed once whole).
  if (!persisted.sandboxed) {
    await run('tar', tarSaveArgs(browser.userDataDir, `${saved}.part`))
      .then(() => renameSync(`${saved}.part`, saved))
      .catch(() => undefined);
  }
  const archive = readArchive(saved, maxBytes);
  if (!archive) return { cookies, note: notSaved('its archive could not be made') };
  const { size } = archive;
  if (!archive.bytes) {
    return {
      cookies,
      note: notSaved(
        `it takes ${megabytes(size)} MB compressed, over the bound of ${megabytes(maxBytes)} MB (PROFILE_MAX_MB); the session's cookies were kept`,
      ),
    };
  }
  return {
    archive: archive.bytes,
    cookies,
    note: { context: 'browser', severity: 'info', message: `profile saved (${kilobytes(size)} KB)`, area: 'profile' },
  };
}

/**
 * The archive the sandbox left, its size, and its bytes when within `maxBytes`; undefined when there
 * is none. The folder is the sandbox's user's to write, and the browser is hostile: only a regular
 * file is read, never through a link (which could name a file of the host) or from a pipe.
 */
export function readArchive(file: string, maxBytes: number): { size: number; bytes?: Buffer } | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return undefined;
    if (stat.size > maxBytes) return { size: stat.size };
    return { size: stat.size, bytes: readFileSync(fd) };
  } finally {
    closeSync(fd);
  }
}

function notSaved(why: string): NewLogEntry {
  return {
    context: 'browser',
    severity: 'error',
    message: `profile not saved: ${why}. The profile saved before (if any) is kept and restored at the next start`,
    area: 'profile',
  };
}

/** The line a persisted browser's log starts with. */
export function restoredNote(profile: PersistedProfile): NewLogEntry {
  return {
    context: 'browser',
    severity: 'info',
    message: profile.archive
      ? `profile restored (${kilobytes(profile.archive.length)} KB saved at the last stop)`
      : 'no profile saved yet: the browser starts with a fresh one, saved when it stops',
    area: 'profile',
  };
}

const megabytes = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
const kilobytes = (bytes: number) => Math.max(1, Math.round(bytes / 1024));
