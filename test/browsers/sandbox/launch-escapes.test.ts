import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openPathTo, prepareSandbox } from '../../../server/browsers/host/chromium/browserSandbox.ts';
import {
  type ChromiumOptions,
  CLEANUP_BOUND_MS,
  destroyBrowser,
  LAUNCH_BOUND_MS,
  type LaunchedBrowser,
  launchChromium,
} from '../../../server/browsers/host/chromium/chromiumProcess.ts';
import { defaultScreen } from '../../../server/browsers/launch/launchSettings.ts';
import { createLogger } from '../../../server/logger.ts';
import { EgressPolicy, parseAllowedDestinations } from '../../../server/net/egressPolicy.ts';
import { PAGE_HOST } from '../../support/pages.ts';
import { chromiumProcesses } from '../../support/sandbox.ts';

/**
 * Launch arguments that the allow-list refuses at the API (`--app=file:…`), given to a sandboxed
 * Chromium anyway, as if one had slipped past: the kernel's fence and the browser's policy still
 * hold. And no process of a sandboxed browser listens on a TCP port, so no other browser (or
 * anything else) can reach its DevTools.
 */

const SECRET = `host-secret-${Date.now()}`;
let browsersDir: string;
let secretsDir: string;
let options: ChromiumOptions;
const open: LaunchedBrowser[] = [];

beforeAll(() => {
  const allowed = parseAllowedDestinations(PAGE_HOST);
  if ('invalid' in allowed) throw new Error('the page host is not a destination');
  const sandbox = prepareSandbox(process.env.BROWSER_SANDBOX_USER ?? 'browserflow-browser', createLogger({ logLevel: 'warn' }));
  if (!sandbox) throw new Error('no sandbox');
  browsersDir = mkdtempSync(path.join(os.tmpdir(), 'bf-launch-escapes-'));
  openPathTo(browsersDir, sandbox);
  // A stand-in for DATA_DIR's jwt-secret: a host file the browser's user could otherwise read.
  secretsDir = mkdtempSync(path.join(os.tmpdir(), 'bf-host-secrets-'));
  writeFileSync(path.join(secretsDir, 'jwt-secret'), SECRET, { mode: 0o644 });
  options = {
    chromiumPath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    egress: new EgressPolicy(allowed),
    browsersDir,
    sandbox,
    cgroups: null,
    diskBytes: 256 * 2 ** 20,
  };
});
afterEach(async () => {
  for (const browser of open.splice(0)) await destroyBrowser(browser).catch(() => undefined);
});
afterAll(async () => {
  rmSync(browsersDir, { recursive: true, force: true });
  rmSync(secretsDir, { recursive: true, force: true });
});

async function launchWith(args: string[]) {
  const browser = await launchChromium(options, { image: 'chromium', screen: defaultScreen, args }, null);
  open.push(browser);
  return browser;
}

/** The text of every tab of the browser, once its first page has had time to load. */
async function tabTexts(browser: LaunchedBrowser) {
  await sleep(1500);
  return Promise.all(
    browser.context
      .pages()
      .map(async (page) => `${page.url()} ${await page.evaluate(() => document.body?.textContent ?? '').catch(() => '')}`),
  );
}

describe('launch arguments past the allow-list', () => {
  it('--app=file: of a service secret or of /etc/shadow opens nothing: the files are not in the sandbox, and the policy blocks file: pages', {
    timeout: 90_000,
  }, async () => {
    // Launched while every core is busy, as on a loaded CI machine, where Playwright's attach
    // once missed the --app window's first commit and waited for it until its timeout.
    const args = [`--app=file://${path.join(secretsDir, 'jwt-secret')}`];
    const browser = await whileCoresAreBusy(() => launchWith(args));
    expect((await tabTexts(browser)).join('\n')).not.toContain(SECRET);
    // The renderer may not navigate to a host file on its own either.
    const [page] = browser.context.pages();
    for (const file of ['/etc/shadow', '/etc/passwd', path.join(secretsDir, 'jwt-secret')]) {
      await page?.evaluate((url) => {
        location.href = url;
      }, `file://${file}`);
      await sleep(800);
      const text = (await page?.evaluate(() => document.body?.textContent ?? '').catch(() => '')) ?? '';
      expect(text, file).not.toMatch(/root:[^:\n]*:\d+/);
      expect(text, file).not.toContain(SECRET);
    }
  });
});

describe('a launch', () => {
  it('whose first tab never loads fails within its bound, naming the tab, instead of hanging on the host’s attach', {
    timeout: 90_000,
  }, async () => {
    const site = http.createServer(() => {}); // takes the request, never answers
    await new Promise<void>((resolve) => site.listen(0, PAGE_HOST, resolve));
    const hanging = `http://${PAGE_HOST}:${(site.address() as AddressInfo).port}/never-answers`;
    const started = Date.now();
    try {
      await expect(launchWith([`--app=${hanging}`])).rejects.toThrow(
        new RegExp(
          `^the host could not attach to the browser within .*: a tab has not finished loading its first page \\(tabs: ${hanging}\\)`,
        ),
      );
      expect(Date.now() - started).toBeLessThan(LAUNCH_BOUND_MS + CLEANUP_BOUND_MS);
    } finally {
      site.closeAllConnections();
      site.close();
    }
  });
});

/** Runs `work` with a busy loop on every core, ended when it settles. */
async function whileCoresAreBusy<T>(work: () => Promise<T>) {
  const loops = os.cpus().map(() => spawn(process.execPath, ['-e', 'for (;;);'], { stdio: 'ignore' }));
  try {
    return await work();
  } finally {
    for (const loop of loops) loop.kill('SIGKILL');
  }
}

/** The inodes of the TCP sockets in LISTEN state in the network namespace `pid` is in. */
function listeningInodes(pid: number) {
  const inodes = new Set<string>();
  for (const table of ['tcp', 'tcp6']) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === '0A') inodes.add(fields[9] as string);
    }
  }
  return inodes;
}

/** The socket inodes a process holds open. */
function socketInodes(pid: number) {
  const inodes: string[] = [];
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      const target = (() => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`);
        } catch {
          return '';
        }
      })();
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode) inodes.push(inode);
    }
  } catch {
    // exited meanwhile
  }
  return inodes;
}

describe('DevTools of a sandboxed browser', () => {
  it('no Chromium process listens on a TCP port: CDP goes over its pipe only', async () => {
    const browser = await launchWith([]);
    const page = await browser.context.newPage();
    await page.goto('about:blank');
    const processes = chromiumProcesses(browser.pid as number);
    expect(processes.length).toBeGreaterThan(1);
    for (const facts of processes) {
      const listening = listeningInodes(facts.pid);
      const held = socketInodes(facts.pid).filter((inode) => listening.has(inode));
      expect(held, `${facts.command} (${facts.pid}) listens on TCP`).toEqual([]);
      const commandLine = readFileSync(`/proc/${facts.pid}/cmdline`, 'utf8');
      expect(commandLine).not.toMatch(/--remote-debugging-port/);
    }
  });
});
