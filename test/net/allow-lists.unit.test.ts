import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { renderAllowLists } from '../../scripts/render-allow-lists.ts';
import { allowedLaunchFlags, parseLaunchArgs } from '../../server/browsers/launch/launchSettings.ts';
import type { BadRequest } from '../../server/errors.ts';
import { guardCdpMessage, isAllowedCdpMethod, parameterRules } from '../../server/http/browsers/cdpGuard.ts';

/**
 * The allow-lists of what a remoteUrl holder may do (docs/browsers.md): launch flags and CDP
 * methods, against what the clients the service promises to serve send, and against the docs.
 */

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);

function refusal(args: string) {
  try {
    parseLaunchArgs(args);
    return null;
  } catch (error) {
    return error as BadRequest;
  }
}

describe('launch flags', () => {
  it('refuse every flag of the probe that got out (issue 21), naming it', () => {
    for (const [args, named] of [
      ['--app=file:///etc/shadow', '--app'],
      ['--debug', '--debug'],
      ['--enable-blink-features=MojoJS', '--enable-blink-features'],
      ['--disable-features=IsolateOrigins,site-per-process', '--disable-features'],
      ['--force-webrtc-ip-handling-policy=default', '--force-webrtc-ip-handling-policy'],
      ['--lang=de --site-per-process', '--site-per-process'],
      ['--enable-features=NetworkServiceInProcess2', '--enable-features'],
      ['--disable-features=NetworkServiceInProcess2', '--disable-features'],
      ['--disable-features=IsolateSandboxedIframes', '--disable-features'],
      ['--disable-features=Translate:x/y', '--disable-features'],
      ['--temp-profile', '--temp-profile'],
      ['--enable-remote-extensions', '--enable-remote-extensions'],
      ['--host-resolver-rules=MAP * 127.0.0.1', '--host-resolver-rules'],
      ['--unsafely-treat-insecure-origin-as-secure=http://x.test', '--unsafely-treat-insecure-origin-as-secure'],
      ['--user-data-dir=/tmp/x', '--user-data-dir'],
      ['--window-size=10,10', '--window-size'],
      ['--disable-web-security', '--disable-web-security'],
    ]) {
      const error = refusal(args as string);
      expect(error?.code, args).toBe('invalid_launch_args');
      expect(error?.message, args).toContain(`${named} is not allowed`);
      expect(error?.issues?.[0]?.message, args).toMatch(new RegExp(`^${named}: `));
    }
  });

  it('take the listed flags with values of their shape, names in lower case', () => {
    expect(
      parseLaunchArgs(
        '--LANG=de-DE --user-agent="Mozilla/5.0 (X11; Linux)" --force-device-scale-factor=1.5 --hide-scrollbars --mute-audio ' +
          '--disable-features=Translate,BackForwardCache --disable-blink-features=AutomationControlled ' +
          '--blink-settings=imagesEnabled=false,primaryHoverType=2 --force-webrtc-ip-handling-policy=disable_non_proxied_udp ' +
          '--autoplay-policy=no-user-gesture-required --force-color-profile=srgb --ignore-certificate-errors',
      ),
    ).toEqual([
      '--lang=de-DE',
      '--user-agent=Mozilla/5.0 (X11; Linux)',
      '--force-device-scale-factor=1.5',
      '--hide-scrollbars',
      '--mute-audio',
      '--disable-features=Translate,BackForwardCache',
      '--disable-blink-features=AutomationControlled',
      '--blink-settings=imagesEnabled=false,primaryHoverType=2',
      '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
      '--autoplay-policy=no-user-gesture-required',
      '--force-color-profile=srgb',
      '--ignore-certificate-errors',
    ]);
  });

  it('refuse a value of the wrong shape, a value for a flag that takes none, and none for one that needs it', () => {
    for (const [args, problem] of [
      ['--lang=de;rm', /language tag/],
      ['--lang=', /language tag/],
      ['--lang', /needs a value/],
      ['--force-device-scale-factor=10', /0\.25 to 4/],
      ['--force-device-scale-factor=1e0', /0\.25 to 4/],
      ['--force-device-scale-factor=0.1', /0\.25 to 4/],
      ['--mute-audio=false', /takes none/],
      ['--blink-settings=javascriptEnabled=false', /javascriptEnabled is not on its list/],
      ['--blink-settings=imagesEnabled=0', /imagesEnabled takes true or false/],
      ['--blink-settings=imagesEnabled', /imagesEnabled takes true or false/],
      ['--disable-blink-features=AutomationControlled,Foo', /Foo is not on its list/],
      ['--password-store=gnome-libsecret', /basic/],
      [`--user-agent=${'x'.repeat(513)}`, /at most 512/],
      ['"--user-agent=Ünïcode"', /printable ASCII/],
    ] as const) {
      const error = refusal(args);
      expect(error?.message, args).toMatch(problem);
      expect(error?.message, args).toMatch(/is not allowed with (this|a) value/);
    }
  });

  it('never repeat a refused name that is not a plain name', () => {
    expect(refusal('--disable-features=<img/src=x>')?.message).toContain('one of its names is not on its list');
  });

  it('each listed flag is a plain lower-case name, and none is one the host owns', () => {
    for (const name of allowedLaunchFlags.keys()) expect(name).toMatch(/^[a-z0-9][a-z0-9-]*$/);
    for (const owned of [
      'headless',
      'window-size',
      'user-data-dir',
      'remote-debugging-port',
      'remote-debugging-pipe',
      'no-sandbox',
      'proxy-server',
    ]) {
      expect(allowedLaunchFlags.has(owned), owned).toBe(false);
    }
  });
});

/**
 * `'Domain.method'` strings in JavaScript source; events among them too (they are not commands,
 * and `protocolCommands` tells them apart).
 */
function methodNames(source: string) {
  return [...source.matchAll(/["']([A-Z][A-Za-z]+\.[a-z][A-Za-z]+)["']/g)].map((match) => match[1] as string);
}

/** Every command of the protocol puppeteer-core is built against (its devtools-protocol). */
function protocolCommands() {
  const from = { paths: [path.dirname(require.resolve('puppeteer-core'))] };
  const domains = ['browser_protocol.json', 'js_protocol.json'].flatMap(
    (file) =>
      JSON.parse(readFileSync(require.resolve(`devtools-protocol/json/${file}`, from), 'utf8')).domains as {
        domain: string;
        commands?: { name: string }[];
      }[],
  );
  return new Set(domains.flatMap(({ domain, commands = [] }) => commands.map(({ name }) => `${domain}.${name}`)));
}

/** The CDP commands playwright-core sends to Chromium: its bundle's server/chromium modules. */
function playwrightCommands(commands: Set<string>) {
  const bundle = readFileSync(path.join(path.dirname(require.resolve('playwright-core/package.json')), 'lib/coreBundle.js'), 'utf8');
  const chromiumModules = bundle
    .split(/^(?=\/\/ packages\/)/m)
    .filter((part) => /^\/\/ packages\/playwright-core\/src\/server\/chromium\//.test(part));
  return new Set(chromiumModules.flatMap(methodNames).filter((name) => commands.has(name)));
}

/** The CDP commands puppeteer-core sends: its cdp/ and common/ modules (not WebDriver BiDi's). */
function puppeteerCommands(commands: Set<string>) {
  const lib = path.join(path.dirname(require.resolve('puppeteer-core')), '..');
  const files = ['cdp', 'common', 'api'].flatMap((folder) =>
    readdirSync(path.join(lib, 'puppeteer', folder), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.js'))
      .map((file) => path.join(lib, 'puppeteer', folder, file)),
  );
  return new Set(files.flatMap((file) => methodNames(readFileSync(file, 'utf8'))).filter((name) => commands.has(name)));
}

/** What the clients may send and the guard refuses all the same: features the service does not offer. */
const refusedClientCommands = new Set([
  'DeviceAccess.enable',
  'DeviceAccess.selectPrompt',
  'DeviceAccess.cancelPrompt',
  'Extensions.loadUnpacked',
  'Extensions.getExtensions',
  'Extensions.triggerAction',
  'Extensions.uninstall',
  'PWA.install',
  'PWA.uninstall',
  'PWA.launch',
  'PWA.getOsAppState',
  'PWA.changeAppUserSettings',
  'Target.openDevTools',
]);

describe('CDP methods', () => {
  const commands = protocolCommands();

  it('allow every command Playwright’s connectOverCDP sends', () => {
    const sent = playwrightCommands(commands);
    // The bundle's layout is what this reads: fail loudly if it no longer finds what it should.
    expect(sent.size).toBeGreaterThan(80);
    expect(sent).toContain('Target.setAutoAttach');
    // Playwright sends it only to give the windows of its own apps (trace viewer, inspector) an icon.
    const appIcon = 'Browser.setDockTile';
    expect([...sent].filter((method) => !isAllowedCdpMethod(method) && method !== appIcon)).toEqual([]);
  });

  it('allow every command Puppeteer’s connect sends, but for the features refused on purpose', () => {
    const sent = puppeteerCommands(commands);
    expect(sent.size).toBeGreaterThan(80);
    expect(sent).toContain('Page.navigate');
    expect([...sent].filter((method) => !isAllowedCdpMethod(method) && !refusedClientCommands.has(method))).toEqual([]);
    for (const method of refusedClientCommands) {
      expect('refuse' in guardCdpMessage(JSON.stringify({ id: 1, method, params: {} })), method).toBe(true);
    }
  });
});

describe('CDP parameter rules', () => {
  it('are for listed methods only', () => {
    expect([...parameterRules.keys()].filter((method) => !isAllowedCdpMethod(method))).toEqual([]);
  });
});

describe('docs/browsers.md', () => {
  it('carries the current allow-lists', () => {
    const docs = readFileSync(path.join(root, 'docs/browsers.md'), 'utf8');
    const generated = /<!-- allow-lists: start -->\n([\s\S]*)\n<!-- allow-lists: end -->/.exec(docs)?.[1] ?? '';
    // The formatter aligns the tables: compare without layout.
    const content = (markdown: string) => markdown.replace(/-{3,}/g, '---').replace(/\s+/g, '');
    expect(
      content(generated),
      'docs/browsers.md is stale: run node scripts/render-allow-lists.ts, then npx biome format --write on it',
    ).toBe(content(renderAllowLists()));
  });
});
