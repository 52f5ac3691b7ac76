import { spawnSync } from 'node:child_process';
import { chromiumBinary } from './browserSandbox.ts';

const majors = new Map<string, string>();

/**
 * The major version of the Chromium at `chromiumPath` (`156`), asked once per binary and process:
 * a desktop user agent names the browser's real version, so that it agrees with what its features
 * say. `--version` runs the binary briefly, outside any sandbox, before any page exists.
 * Undefined when it does not say (no fingerprint flags then).
 */
export function browserMajorVersion(chromiumPath: string): string | undefined {
  const known = majors.get(chromiumPath);
  if (known) return known;
  const ran = spawnSync(chromiumBinary(chromiumPath), ['--version'], { encoding: 'utf8', timeout: 10_000 });
  const major = /(\d+)\.\d+\.\d+\.\d+/.exec(ran.stdout ?? '')?.[1];
  // A binary that does not say its version is no working Chromium: its launch fails with its own
  // error, which is what the caller should see (not this one).
  if (major) majors.set(chromiumPath, major);
  return major;
}
