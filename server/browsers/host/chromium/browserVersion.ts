import { spawnSync } from 'node:child_process';
import { chromiumBinary } from './browserSandbox.ts';

const majors = new Map<string, string>();

/**
 * The major version of the Chromium at `chromiumPath` (`156`), asked once per binary and process:
 * a desktop user agent names the browser's real version, so that it agrees with what its features
 * say. `--version` runs the binary briefly, outside any sandbox, before any page exists.
 */
export function browserMajorVersion(chromiumPath: string): string {
  const known = majors.get(chromiumPath);
  if (known) return known;
  const ran = spawnSync(chromiumBinary(chromiumPath), ['--version'], { encoding: 'utf8', timeout: 10_000 });
  const major = /(\d+)\.\d+\.\d+\.\d+/.exec(ran.stdout ?? '')?.[1];
  if (!major)
    throw new Error(`could not read the version of ${chromiumPath} (${(ran.stderr || ran.error?.message || '').trim().slice(0, 200)})`);
  majors.set(chromiumPath, major);
  return major;
}
