import { z } from 'zod';
import type { BrowserSession, Screen } from '../../../db/entities/BrowserSession.ts';
import { BadRequest } from '../../errors.ts';
import { PLAYWRIGHT_FEATURES } from './chromiumFlags.ts';
import { type FingerprintMode, fingerprintModes, type LaunchFingerprint } from './fingerprint.ts';
import { isKnownImage } from './images.ts';

/**
 * What a browser is launched with (spec 2, Session; 4.4): its image, screen and Chromium flags.
 * The api checks them on create and update; the host launches with `launchSettingsOf` the stored
 * session, so the screen fits a real display and the flags leave the host in charge.
 */

/**
 * What a browser is launched with and cannot change afterwards: a warm browser fits a start only if
 * these match. No `fingerprint` is the default one (`defaultLaunchFingerprint`).
 */
export type LaunchSettings = { image: string; screen: Screen; args: readonly string[]; fingerprint?: LaunchFingerprint };

/**
 * A stored session's launch settings, its flags parsed: what the api's warm-browser signature and
 * the host's launch both read, so they agree on what a session launches with.
 */
export function launchSettingsOf(session: Pick<BrowserSession, 'image' | 'screen' | 'args' | 'fingerprint' | 'locale' | 'timezone'>) {
  const mode = (fingerprintModes as readonly string[]).includes(session.fingerprint) ? (session.fingerprint as FingerprintMode) : 'desktop';
  return {
    image: session.image,
    screen: session.screen,
    args: parseLaunchArgs(session.args),
    fingerprint: { mode, locale: session.locale, timezone: session.timezone },
  } satisfies LaunchSettings;
}

export const defaultScreen: Screen = { width: 1280, height: 720 };

export const screenSchema = z.strictObject({
  width: z.number().int().min(200).max(7680),
  height: z.number().int().min(200).max(4320),
});

/**
 * How a flag's value is checked, and how the docs show it; a flag without one takes no value.
 * `problem` answers what is wrong with a value, or null when it fits.
 */
type FlagValue = { shape: string; problem(value: string): string | null };

const code = (text: string) => `\`${text}\``;
const oneOf = (...values: string[]): FlagValue => ({
  shape: values.length === 1 ? code(values[0] as string) : `one of ${values.map(code).join(', ')}`,
  problem: (value) => (values.includes(value) ? null : `it takes ${values.length === 1 ? '' : 'one of '}${values.join(', ')}`),
});
const matching = (pattern: RegExp, shape: string): FlagValue => ({
  shape,
  problem: (value) => (pattern.test(value) ? null : `it takes ${shape.replace(/`/g, '')}`),
});
/** Names a refusal may repeat: the caller's own input, but only when it is a plain name. */
const plainName = /^[A-Za-z0-9_-]{1,64}$/;
/** A comma-separated list of names, each one of `names`. */
const namesFrom = (names: readonly string[]): FlagValue => ({
  shape: `comma-separated names, each one of ${names.map(code).join(', ')}`,
  problem: (value) => {
    const refused = value.split(',').find((name) => !names.includes(name));
    if (refused === undefined) return null;
    return `${plainName.test(refused) ? refused : 'one of its names'} is not on its list (docs/browsers.md)`;
  },
});
const numberBetween = (min: number, max: number): FlagValue => ({
  shape: `a number from ${min} to ${max}`,
  problem: (value) =>
    /^\d{1,2}(\.\d{1,4})?$/.test(value) && Number(value) >= min && Number(value) <= max ? null : `it takes a number from ${min} to ${max}`,
});

/**
 * Features a session may turn off: prompts, background services and rendering shortcuts, none of
 * which fences a page (`IsolateOrigins`, `SitePerProcess`, `IsolateSandboxedIframes`,
 * WebRTC's mDNS and private-network checks are not here), plus those Playwright already turns off
 * (naming them again changes nothing).
 * None may be turned on: a feature switched on can be anything, Mojo bindings for pages included.
 */
const disableableFeatures = [
  'AcceptCHFrame',
  'AutofillServerCommunication',
  'BackForwardCache',
  'DialMediaRouteProvider',
  'GlobalMediaControls',
  'HeavyAdIntervention',
  'HeavyAdPrivacyMitigations',
  'MediaRouter',
  'OptimizationHints',
  'PaintHolding',
  'ProcessPerSiteUpToMainFrameThreshold',
  'Translate',
  ...PLAYWRIGHT_FEATURES.disabled,
].filter((name, index, all) => all.indexOf(name) === index);

/**
 * Blink settings (`--blink-settings=key=value,…`) a session may set. Playwright's headless
 * pointer settings are among them: a session's `--blink-settings` replaces Playwright's (Chromium
 * reads the last), so they can be given again.
 */
const blinkSettings = new Map<string, 'boolean' | 'number'>([
  ['imagesEnabled', 'boolean'],
  ['loadsImagesAutomatically', 'boolean'],
  ['forceDarkModeEnabled', 'boolean'],
  ['hideScrollbars', 'boolean'],
  ['primaryHoverType', 'number'],
  ['availableHoverTypes', 'number'],
  ['primaryPointerType', 'number'],
  ['availablePointerTypes', 'number'],
]);
const blinkSettingValues = { boolean: /^(true|false)$/, number: /^\d{1,2}$/ };
const blinkSettingsValue: FlagValue = {
  shape: `comma-separated \`key=value\`, keys ${[...blinkSettings.keys()].map(code).join(', ')} (booleans; pointer and hover types as numbers)`,
  problem: (value) => {
    for (const setting of value.split(',')) {
      const [key = '', item, ...rest] = setting.split('=');
      const type = blinkSettings.get(key);
      if (!type) return `${plainName.test(key) ? key : 'one of its keys'} is not on its list (docs/browsers.md)`;
      if (rest.length || item === undefined || !blinkSettingValues[type].test(item))
        return `${key} takes ${type === 'boolean' ? 'true or false' : 'a number'}`;
    }
    return null;
  },
};

/**
 * The only flags a session may pass to Chromium, each with what it is for and its value's shape.
 * Each one changes what pages see or how they render, turns something off, or does what a CDP
 * client may do anyway (`--ignore-certificate-errors` is `Security.setIgnoreCertificateErrors`).
 * None loosens the sandbox, site isolation or the same-origin policy, opens a debugging surface,
 * names a host path, runs a program, or sets a proxy: the host, the session's `screen` and its
 * `proxy` own those. Chromium reads the last of a repeated switch, and the session's come after
 * the host's, so a flag the host sets itself is allowed only with a value no weaker than the host's.
 */
export const allowedLaunchFlags = new Map<string, { does: string; value?: FlagValue }>([
  [
    'lang',
    {
      does: 'the UI and Accept-Language language',
      value: matching(/^[a-zA-Z]{2,3}([-_][a-zA-Z0-9]{1,8}){0,3}$/, 'a language tag: `de`, `de-DE`, `zh-Hant-TW`'),
    },
  ],
  [
    'user-agent',
    {
      does: 'the User-Agent header and `navigator.userAgent`',
      value: matching(/^[\x20-\x7e]{1,512}$/, 'printable ASCII, at most 512 characters'),
    },
  ],
  ['force-device-scale-factor', { does: 'the device pixel ratio', value: numberBetween(0.25, 4) }],
  [
    'force-color-profile',
    {
      does: 'the colour profile pages are rendered in',
      value: oneOf('srgb', 'display-p3-d65', 'rec2020', 'scrgb-linear', 'hdr10', 'generic-rgb', 'color-spin-gamma24'),
    },
  ],
  ['force-dark-mode', { does: 'dark browser UI and `prefers-color-scheme: dark`' }],
  ['blink-settings', { does: 'page settings: images, dark mode, pointer and hover types', value: blinkSettingsValue }],
  ['font-render-hinting', { does: 'font hinting (for reproducible screenshots)', value: oneOf('none', 'slight', 'medium', 'full') }],
  ['disable-font-subpixel-positioning', { does: 'whole-pixel glyph positions' }],
  ['disable-lcd-text', { does: 'greyscale text anti-aliasing' }],
  ['hide-scrollbars', { does: 'no scrollbars in screenshots' }],
  ['mute-audio', { does: 'no sound' }],
  [
    'autoplay-policy',
    {
      does: 'whether media may play without a click',
      value: oneOf('no-user-gesture-required', 'user-gesture-required', 'document-user-activation-required'),
    },
  ],
  ['run-all-compositor-stages-before-draw', { does: 'complete frames only (reproducible screenshots)' }],
  ['disable-smooth-scrolling', { does: 'instant scrolling' }],
  ['disable-threaded-animation', { does: 'animations on the main thread' }],
  ['disable-threaded-scrolling', { does: 'scrolling on the main thread' }],
  ['disable-checker-imaging', { does: 'images decoded before the frame that shows them' }],
  ['disable-new-content-rendering-timeout', { does: 'no blank frame while a navigation commits' }],
  ['disable-blink-features', { does: 'hides `navigator.webdriver`', value: namesFrom(['AutomationControlled']) }],
  ['disable-features', { does: 'turns off browser features (none that fences a page)', value: namesFrom(disableableFeatures) }],
  ['enable-automation', { does: 'the automation infobar and `navigator.webdriver` (Playwright sets it)' }],
  ['ignore-certificate-errors', { does: 'accepts any TLS certificate, as `Security.setIgnoreCertificateErrors` does' }],
  ['use-fake-device-for-media-stream', { does: 'a fake camera and microphone instead of any device' }],
  [
    'force-webrtc-ip-handling-policy',
    { does: 'WebRTC may send UDP only through the proxy (what the egress policy sets)', value: oneOf('disable_non_proxied_udp') },
  ],
  ['disable-notifications', { does: 'no notification permission prompts' }],
  ['deny-permission-prompts', { does: 'every permission prompt answered no' }],
  ['disable-popup-blocking', { does: 'pop-ups open (Playwright sets it)' }],
  ['disable-prompt-on-repost', { does: 'no prompt when a POST is reloaded' }],
  ['allow-pre-commit-input', { does: 'input before the first frame (Playwright sets it)' }],
  ['disable-background-timer-throttling', { does: 'timers of background pages run at full speed' }],
  ['disable-backgrounding-occluded-windows', { does: 'hidden windows are not put in the background' }],
  ['disable-renderer-backgrounding', { does: 'background pages keep their priority' }],
  ['disable-back-forward-cache', { does: 'no back/forward cache' }],
  ['disable-hang-monitor', { does: 'no hung-page dialog' }],
  ['disable-ipc-flooding-protection', { does: 'no throttling of fast navigations and history changes' }],
  ['disable-extensions', { does: 'no extensions (the default)' }],
  ['disable-component-extensions-with-background-pages', { does: 'no built-in extensions with background pages' }],
  ['disable-default-apps', { does: 'no default apps' }],
  ['disable-client-side-phishing-detection', { does: 'no phishing classifier' }],
  ['disable-domain-reliability', { does: 'no Domain Reliability reports' }],
  ['no-pings', { does: 'no hyperlink auditing pings' }],
  ['disable-background-networking', { does: 'no background requests (the host sets it)' }],
  ['disable-component-update', { does: 'no component updates (the host sets it)' }],
  ['disable-sync', { does: 'no sync (the host sets it)' }],
  ['disable-breakpad', { does: 'no crash reporter' }],
  ['disable-crash-reporter', { does: 'no crash reporter' }],
  ['disable-gpu', { does: 'no GPU (the host sets it)' }],
  ['disable-software-rasterizer', { does: 'no software WebGL' }],
  ['disable-dev-shm-usage', { does: 'shared memory in /tmp (the host sets it)' }],
  ['disable-infobars', { does: 'no infobars' }],
  ['disable-search-engine-choice-screen', { does: 'no search engine choice' }],
  ['no-first-run', { does: 'no first-run pages (the host sets it)' }],
  ['no-default-browser-check', { does: 'no default-browser prompt' }],
  ['metrics-recording-only', { does: 'metrics recorded, never sent' }],
  ['password-store', { does: 'passwords kept in the profile (Playwright sets it)', value: oneOf('basic') }],
  ['export-tagged-pdf', { does: 'tagged (accessible) PDFs' }],
  ['generate-pdf-document-outline', { does: 'PDFs with an outline' }],
]);

/**
 * Why some flags people try are refused, for the 400's message; any other flag not allowed above
 * is refused all the same, as unknown. This is not the gate: `allowedLaunchFlags` is.
 */
const hostControlled = 'the browser host sets it';
const debugging = 'the browser host owns the debugging endpoint';
const hostFiles = 'it reads or writes the host’s files';
const runsPrograms = 'it runs programs on the host';
const isolation = 'it weakens the sandbox or site isolation';
const whyRefused = new Map<string, string>([
  ['app', 'it opens a URL (a file: one included) outside the checks on navigations'],
  ['debug', 'Debian’s launcher starts a debugger on the host for it'],
  ['remote-allow-origins', debugging],
  ['auto-open-devtools-for-tabs', debugging],
  ['custom-devtools-frontend', debugging],
  ['user-data-dir', hostFiles],
  ['profile-directory', hostFiles],
  ['disk-cache-dir', hostFiles],
  ['log-file', hostFiles],
  ['enable-logging', hostFiles],
  ['load-extension', hostFiles],
  ['ssl-key-log-file', hostFiles],
  ['allow-file-access-from-files', hostFiles],
  ['renderer-cmd-prefix', runsPrograms],
  ['utility-cmd-prefix', runsPrograms],
  ['gpu-launcher', runsPrograms],
  ['browser-subprocess-path', runsPrograms],
  ['no-sandbox', isolation],
  ['disable-setuid-sandbox', isolation],
  ['no-zygote', isolation],
  ['single-process', isolation],
  ['disable-site-isolation-trials', isolation],
  ['js-flags', isolation],
  ['disable-web-security', 'it turns off the same-origin policy'],
  ['enable-blink-features', 'it can give pages Mojo bindings; no Blink feature may be turned on'],
  ['enable-features', 'a feature switched on can be anything; no feature may be turned on'],
  ['headless', hostControlled],
  ['window-size', 'use the session’s screen'],
  ['proxy-server', 'use the session’s proxy'],
  ['proxy-pac-url', 'use the session’s proxy'],
  ['proxy-bypass-list', 'use the session’s proxy'],
  ['no-proxy-server', 'use the session’s proxy'],
  ['host-resolver-rules', 'the host’s proxy and egress policy decide where names go'],
]);
const whyRefusedPrefixes: [string, string][] = [
  ['remote-debugging-', debugging],
  ['native-messaging-', runsPrograms],
  ['proxy-', 'use the session’s proxy'],
];

export const maxLaunchArgsLength = 4000;
const maxLaunchFlags = 100;
/** `--name` or `--name=value`. Chromium also reads `-name`, so a single dash is refused rather than missed. */
const flagPattern = /^--([a-z0-9][a-z0-9._-]*)(?:=([\s\S]*))?$/i;

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
 * The session's `args` string as a list of Chromium flags, each `--name` or `--name=value` with its
 * name in `allowedLaunchFlags` (compared in lower case, and given to Chromium so) and its value of
 * that flag's shape. Throws BadRequest naming the first flag that is not. Stored args are parsed
 * again when a browser starts (`launchSettingsOf`), so a flag allowed once and not any more
 * refuses the start, naming it, rather than reaching Chromium.
 */
export function parseLaunchArgs(args: string): string[] {
  if (args.length > maxLaunchArgsLength) throw badArg(`args is longer than ${maxLaunchArgsLength} characters`);
  const flags = tokenize(args);
  if (flags.length > maxLaunchFlags) throw badArg(`at most ${maxLaunchFlags} flags`);
  return flags.map((flag) => {
    const match = flagPattern.exec(flag);
    const shown = flag.length > 80 ? `${flag.slice(0, 80)}…` : flag;
    if (!match) throw badArg(`${shown} is not a launch flag (--name or --name=value)`, shown);
    const name = (match[1] as string).toLowerCase();
    const value = match[2];
    // Caught here rather than by the launch: a NUL cannot be passed to a process at all (the start
    // would fail), and a newline or other control is no part of any flag's value.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
    if (/[\u0000-\u001f\u007f]/.test(flag)) throw badArg(`--${name} has a control character in its value`, `--${name}`);
    const allowed = allowedLaunchFlags.get(name);
    if (!allowed) {
      const reason =
        whyRefused.get(name) ??
        whyRefusedPrefixes.find(([prefix]) => name.startsWith(prefix))?.[1] ??
        'it is not on the service’s list of launch flags (docs/browsers.md)';
      throw badArg(`--${name} is not allowed: ${reason}`, `--${name}`);
    }
    if (!allowed.value) {
      if (value !== undefined) throw badArg(`--${name} is not allowed with a value: it takes none`, `--${name}`);
      return `--${name}`;
    }
    const problem = value === undefined ? 'it needs a value (--name=value)' : allowed.value.problem(value);
    if (problem) throw badArg(`--${name} is not allowed with this value: ${problem}`, `--${name}`);
    return `--${name}=${value}`;
  });
}

export function checkImage(image: string) {
  if (!isKnownImage(image)) {
    throw new BadRequest('unknown_image', `Unknown browser image ${image}`, { issues: [{ path: ['image'], message: 'unknown image' }] });
  }
}
