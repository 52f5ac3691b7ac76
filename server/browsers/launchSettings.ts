import { z } from 'zod';
import type { BrowserSession, Screen } from '../../db/entities/BrowserSession.ts';
import { BadRequest } from '../errors.ts';
import { isKnownImage } from './images.ts';

/**
 * What a browser is launched with (spec 2, Session; 4.4): its image, screen and Chromium flags.
 * The api checks them on create and update; the host launches with `launchSettingsOf` the stored
 * session, so the screen fits a real display and the flags leave the host in charge.
 */

/** What a browser is launched with and cannot change afterwards: a warm browser fits a start only if these match. */
export type LaunchSettings = { image: string; screen: Screen; args: readonly string[] };

/**
 * A stored session's launch settings, its flags parsed: what the api's warm-browser signature and
 * the host's launch both read, so they agree on what a session launches with.
 */
export function launchSettingsOf(session: Pick<BrowserSession, 'image' | 'screen' | 'args'>) {
  return { image: session.image, screen: session.screen, args: parseLaunchArgs(session.args) } satisfies LaunchSettings;
}

export const defaultScreen: Screen = { width: 1280, height: 720 };

export const screenSchema = z.strictObject({
  width: z.number().int().min(200).max(7680),
  height: z.number().int().min(200).max(4320),
});

/**
 * Flags a session may not pass to Chromium, with why. The host owns debugging (its CDP endpoint is
 * what the api proxies behind tokens), the sandbox, the file system and the processes it starts;
 * screen and proxy have their own fields, so flags cannot bypass their rules.
 */
const hostControlled = 'the browser host sets it';
const debugging = 'the browser host owns the debugging endpoint';
const writesFiles = 'it writes to or reads from the host’s file system';
const runsPrograms = 'it runs programs on the host';
const sandbox = 'it weakens the sandbox';
const hangs = 'it stops the browser until a debugger attaches';
const internal = 'it is internal to Chromium’s child processes';
const deniedFlags = new Map<string, string>([
  ['remote-allow-origins', debugging],
  ['auto-open-devtools-for-tabs', debugging],
  ['custom-devtools-frontend', debugging],
  ['enable-unsafe-extension-debugging', debugging],
  ['silent-debugger-extension-api', debugging],
  ['expose-internals-for-testing', debugging],
  ['enable-gpu-benchmarking', writesFiles],
  ['wait-for-debugger', hangs],
  ['wait-for-debugger-children', hangs],
  ['wait-for-debugger-on-navigation', hangs],
  ['renderer-startup-dialog', hangs],
  ['gpu-startup-dialog', hangs],
  ['profile-directory', writesFiles],
  ['ssl-key-log-file', writesFiles],
  ['media-cache-dir', writesFiles],
  ['trace-startup', writesFiles],
  ['trace-config-file', writesFiles],
  ['trace-to-file', writesFiles],
  ['trace-to-file-name', writesFiles],
  ['enable-tracing-output', writesFiles],
  ['profiling-file', writesFiles],
  ['profiling-at-start', writesFiles],
  ['enable-profiling', writesFiles],
  ['ozone-dump-file', writesFiles],
  ['file-url-path-alias', writesFiles],
  ['use-file-for-fake-video-capture', writesFiles],
  ['use-file-for-fake-audio-capture', writesFiles],
  ['enable-remote-extensions', writesFiles],
  ['allowlisted-extension-id', writesFiles],
  ['whitelisted-extension-id', writesFiles],
  ['extensions-on-chrome-urls', writesFiles],
  ['load-apps', writesFiles],
  ['install-chrome-app', writesFiles],
  ['policy', hostControlled],
  ['repl', hostControlled],
  ['field-trial-handle', internal],
  ['metrics-shmem-handle', internal],
  ['mojo-platform-channel-handle', internal],
  ['shared-files', internal],
  ['service-sandbox-type', internal],
  ['disable-site-isolation-trials', sandbox],
  ['user-data-dir', writesFiles],
  ['disk-cache-dir', writesFiles],
  ['crash-dumps-dir', writesFiles],
  ['log-file', writesFiles],
  ['log-net-log', writesFiles],
  ['trace-startup-file', writesFiles],
  ['enable-logging', writesFiles],
  ['v', writesFiles],
  ['vmodule', writesFiles],
  ['print-to-pdf', writesFiles],
  ['screenshot', writesFiles],
  ['dump-dom', hostControlled],
  ['allow-file-access-from-files', writesFiles],
  ['allow-file-access', writesFiles],
  ['load-extension', writesFiles],
  ['disable-extensions-except', writesFiles],
  ['disable-web-security', 'it turns off the same-origin policy'],
  ['renderer-cmd-prefix', runsPrograms],
  ['utility-cmd-prefix', runsPrograms],
  ['gpu-launcher', runsPrograms],
  ['plugin-launcher', runsPrograms],
  ['ppapi-plugin-launcher', runsPrograms],
  ['zygote-cmd-prefix', runsPrograms],
  ['browser-subprocess-path', runsPrograms],
  ['type', internal],
  ['no-sandbox', sandbox],
  ['disable-setuid-sandbox', sandbox],
  ['disable-gpu-sandbox', sandbox],
  ['disable-seccomp-filter-sandbox', sandbox],
  ['disable-namespace-sandbox', sandbox],
  ['no-zygote', sandbox],
  ['single-process', sandbox],
  ['js-flags', sandbox],
  ['headless', hostControlled],
  ['window-size', 'use the session’s screen'],
  ['proxy-server', 'use the session’s proxy'],
  ['proxy-pac-url', 'use the session’s proxy'],
  ['proxy-bypass-list', 'use the session’s proxy'],
  ['proxy-auto-detect', 'use the session’s proxy'],
  ['no-proxy-server', 'use the session’s proxy'],
]);
const deniedPrefixes: [string, string][] = [
  ['remote-debugging-', debugging],
  // Chromium connects native messaging hosts: programs on the host.
  ['native-messaging-', runsPrograms],
];

export const maxLaunchArgsLength = 4000;
const maxLaunchFlags = 100;
/** `--name` or `--name=value`. Chromium also reads `-name`, so a single dash is refused rather than missed. */
const flagPattern = /^--([a-z0-9][a-z0-9._-]*)(?:=[\s\S]*)?$/i;

function badArg(message: string, flag?: string) {
  return new BadRequest('invalid_launch_args', message, { issues: [{ path: ['args'], message: flag ? `${flag}: ${message}` : message }] });
}

/** Splits like a shell: whitespace separates, single and double quotes group, `\` escapes. */
function tokenize(args: string) {
  const tokens: string[] = [];
  let current = '';
  let inToken = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < args.length; i++) {
    const char = args[i] as string;
    if (quote) {
      if (char === quote) quote = null;
      else if (char === '\\' && quote === '"' && i + 1 < args.length) current += args[++i];
      else current += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      inToken = true;
    } else if (char === '\\' && i + 1 < args.length) {
      current += args[++i];
      inToken = true;
    } else if (/\s/.test(char)) {
      if (inToken) tokens.push(current);
      current = '';
      inToken = false;
    } else {
      current += char;
      inToken = true;
    }
  }
  if (quote) throw badArg(`unterminated ${quote} quote in args`);
  if (inToken) tokens.push(current);
  return tokens;
}

/**
 * The session's `args` string as a list of Chromium flags. Throws BadRequest naming the first flag
 * that is not a `--flag[=value]` or that the deny-list refuses. Stored args are parsed again by `launchSettingsOf`.
 */
export function parseLaunchArgs(args: string): string[] {
  if (args.length > maxLaunchArgsLength) throw badArg(`args is longer than ${maxLaunchArgsLength} characters`);
  const flags = tokenize(args);
  if (flags.length > maxLaunchFlags) throw badArg(`at most ${maxLaunchFlags} flags`);
  for (const flag of flags) {
    const match = flagPattern.exec(flag);
    const shown = flag.length > 80 ? `${flag.slice(0, 80)}…` : flag;
    if (!match) throw badArg(`${shown} is not a launch flag (--name or --name=value)`, shown);
    // Caught here rather than by the launch: a NUL cannot be passed to a process at all (the start
    // would fail), and a newline or other control is no part of any flag's value.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
    if (/[\u0000-\u001f\u007f]/.test(flag)) throw badArg(`--${match[1]} has a control character in its value`, `--${match[1]}`);
    const name = (match[1] as string).toLowerCase();
    const reason = deniedFlags.get(name) ?? deniedPrefixes.find(([prefix]) => name.startsWith(prefix))?.[1];
    if (reason) throw badArg(`--${name} is not allowed: ${reason}`, `--${name}`);
  }
  return flags;
}

export function checkImage(image: string) {
  if (!isKnownImage(image)) {
    throw new BadRequest('unknown_image', `Unknown browser image ${image}`, { issues: [{ path: ['image'], message: 'unknown image' }] });
  }
}
