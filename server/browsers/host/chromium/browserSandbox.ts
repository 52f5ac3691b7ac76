import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { ConfigError } from '../../../config.ts';
import { PROFILE_RUN_DIR, sandboxProfileScript } from '../profiles/persistedProfile.ts';

/**
 * The kernel's fence around every browser of a host (docs/browsers.md, "Threat model";
 * docs/architecture-decisions.md says why bubblewrap). Chromium runs
 *
 * - as an unprivileged user (`BROWSER_SANDBOX_USER`), switched to by `setpriv` before anything
 *   else runs, with no supplementary groups and no way to gain privileges;
 * - in namespaces of its own (bubblewrap `--unshare-all`): user, pid, ipc, uts, cgroup, mount and
 *   network. The mount namespace shows `/usr`, a short list of `/etc` files, its own profile
 *   folder (the only place it may write, apart from a private `/tmp`), the browser policy, and the
 *   egress proxy's socket: no DATA_DIR, no checkout, no `/etc/shadow`, no other browser. The
 *   network namespace has a loopback interface and nothing else: the one way out is a forwarder
 *   (socat) inside it, on 127.0.0.1:`PROXY_PORT`, to the egress proxy's Unix socket outside. So a
 *   `direct://` context, WebRTC's UDP, a raw socket, or any address the proxy refuses have no route;
 *   and no port of the host (Temporal, PostgreSQL, the api, other browsers) exists for it;
 * - with Chromium's own sandbox on (no `--no-sandbox`): its renderers get namespaces and seccomp
 *   filters inside ours.
 *
 * `BROWSER_SANDBOX=off` runs Chromium as the host's user on the host's network, as before: for
 * development only, and the host says so at every start.
 */

/** Where, inside a browser's network namespace, the forwarder to its egress proxy listens. */
export const PROXY_PORT = 3128;
/** Inside the sandbox: the folder holding the egress proxy's socket, and the browser policy. */
const RUN_DIR = '/run/browserflow';
const POLICY_DIR = '/etc/chromium/policies/managed';

/** Files of /etc a browser may read (fonts, certificates, the dynamic linker, names); nothing else of /etc. */
const ETC_FILES = [
  'fonts',
  'ssl',
  'ca-certificates',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'alternatives',
  'localtime',
  'timezone',
  'nsswitch.conf',
  'passwd',
  'group',
  'hosts',
  'mime.types',
  'xdg',
  'gtk-3.0',
];

/**
 * Chromium's enterprise policy inside the sandbox: renderer-side navigations to local schemes are
 * refused by the browser itself (the CDP guard sees only what a client asks, not what a page does),
 * and WebRTC sends nothing around the proxy. Downloads go to the browser's own folder in its
 * profile (`downloadPolicy`), whatever a client sets (server/browsers/host/downloads/).
 */
export const BROWSER_POLICY = {
  URLBlocklist: ['file://*', 'chrome://*', 'chrome-untrusted://*', 'devtools://*', 'chrome-extension://*', 'view-source:*', 'filesystem:*'],
  URLAllowlist: ['chrome://new-tab-page', 'chrome://newtab'],
  WebRtcIPHandling: 'disable_non_proxied_udp',
  WebRtcUdpPortRange: '',
  BrowserSignin: 0,
  PasswordManagerEnabled: false,
  AutofillAddressEnabled: false,
  AutofillCreditCardEnabled: false,
  DefaultBrowserSettingEnabled: false,
  MetricsReportingEnabled: false,
};

/** The policy's part for one browser: its downloads folder, never asked about (CDP overrides it per context too). */
export function downloadPolicy(downloadsDir: string) {
  return { DownloadDirectory: downloadsDir, PromptForDownloadLocation: false };
}

export type SandboxOptions = {
  /** The user browsers run as: BROWSER_SANDBOX_USER when the host runs as root, else the host's own user. */
  user: string;
  /** Whether the host switches to `user` (it runs as root); otherwise its own user namespace is the fence. */
  switchUser: boolean;
};

/**
 * `command` run as the sandbox's user: a root host switches to it first with `setpriv` (no
 * supplementary groups, no new privileges, killed with the host); any other host is that user.
 */
function asSandboxUser(options: SandboxOptions, command: string[], extra: string[] = []) {
  if (!options.switchUser) return { command: command[0] as string, args: command.slice(1) };
  return {
    command: 'setpriv',
    args: [`--reuid=${options.user}`, `--regid=${options.user}`, '--clear-groups', ...extra, '--', ...command],
  };
}

/**
 * The command line that starts `chromium` with `args` inside the sandbox. The profile is a tmpfs
 * of `diskBytes` (downloads and HOME included) at the profile folder's own path inside (that path,
 * on the command line, is how the host finds its browsers' processes): a page that fills it gets a
 * quota error, and the host's disk never sees it. The folder of the egress proxy's socket appears
 * at /run/browserflow, the policy where Chromium reads it. `diskBytes` null binds the profile
 * folder of the host's disk instead, unbounded: only `bench:sandbox`'s baseline does.
 */
export function sandboxCommand(
  options: SandboxOptions,
  chromium: string,
  /** `persisted`: a persisted session's folder, bound at PROFILE_RUN_DIR (../profiles/persistedProfile.ts). */
  folders: { profile: string; run: string; policy: string; persisted?: string },
  args: string[],
  diskBytes: number | null,
) {
  const bind = (kind: '--ro-bind-try' | '--ro-bind', path: string) => [kind, path, path];
  const filesystem = [
    ...bind('--ro-bind', '/usr'),
    ...['lib', 'lib64', 'bin', 'sbin'].flatMap((name) =>
      isSymlinkIntoUsr(`/${name}`) ? ['--symlink', `usr/${name}`, `/${name}`] : bind('--ro-bind-try', `/${name}`),
    ),
    ...ETC_FILES.flatMap((name) => bind('--ro-bind-try', `/etc/${name}`)),
    ...bind('--ro-bind-try', '/sys/devices/system/cpu'),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    '--tmpfs',
    '/dev/shm',
    ...(diskBytes === null
      ? ['--bind', folders.profile, folders.profile]
      : ['--perms', '0700', '--size', String(diskBytes), '--tmpfs', folders.profile]),
    '--ro-bind',
    folders.run,
    RUN_DIR,
    '--ro-bind',
    folders.policy,
    POLICY_DIR,
    ...(folders.persisted ? ['--bind', folders.persisted, PROFILE_RUN_DIR] : []),
  ];
  // socat forwards the namespace's 127.0.0.1:PROXY_PORT to the egress proxy; Chromium replaces
  // the shell, so the sandbox lives as long as the browser (bubblewrap ends the rest with it).
  // HOME is in the profile, whose tmpfs starts empty.
  // A persisted profile is unpacked first, and Chromium runs as a child, so its profile is packed after it exits.
  const persisted = folders.persisted ? sandboxProfileScript(folders.profile) : null;
  const script = `mkdir -p "$HOME" || exit 1; ${persisted?.restore ?? ''}socat -lf /dev/null TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${RUN_DIR}/egress.sock & ${persisted?.run ?? 'exec "$@"'}`;
  return asSandboxUser(
    options,
    [
      'bwrap',
      '--unshare-all',
      '--die-with-parent',
      '--new-session',
      '--hostname',
      'browser',
      ...filesystem,
      '--chdir',
      '/',
      '--',
      '/bin/sh',
      '-c',
      script,
      'sh',
      chromium,
      ...args,
    ],
    ['--no-new-privs', '--pdeathsig', 'KILL'],
  );
}

/** Debian's merged /usr: /lib, /bin … are links into /usr, made again as links inside. */
function isSymlinkIntoUsr(path: string) {
  try {
    return readlinkSync(path).replace(/^\//, '') === `usr${path}`;
  } catch {
    return false;
  }
}

/**
 * The Chromium binary itself: Debian's /usr/bin/chromium is a shell script that reads
 * /etc/chromium.d and honours `--debug` (gdb on the host); the sandbox runs the binary it wraps.
 */
export function chromiumBinary(chromiumPath: string) {
  try {
    const head = readFileSync(chromiumPath, { encoding: 'latin1' }).slice(0, 2);
    if (head === '#!' && existsSync('/usr/lib/chromium/chromium')) return '/usr/lib/chromium/chromium';
  } catch {
    // not readable: let the launch say so
  }
  return chromiumPath;
}

/**
 * Why the sandbox cannot be built on this machine, or null when it can: the tools are there, the
 * user exists, and a sandbox with every namespace starts. A host refuses to start on an answer
 * (unless BROWSER_SANDBOX=off); the message says what to install or grant.
 */
export function sandboxUnavailable(options: SandboxOptions): string | null {
  for (const tool of [...(options.switchUser ? ['setpriv'] : []), 'bwrap', 'socat']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) {
      return `${tool} is not installed (Debian: apt-get install ${tool === 'setpriv' ? 'util-linux' : tool === 'bwrap' ? 'bubblewrap' : 'socat'})`;
    }
  }
  if (spawnSync('id', ['-u', options.user]).status !== 0) {
    return `the user ${options.user} does not exist (useradd --system --no-create-home --shell /usr/sbin/nologin ${options.user})`;
  }
  const bwrap = ['bwrap', '--unshare-all', '--die-with-parent', '--ro-bind', '/usr', '/usr', '--symlink', 'usr/bin', '/bin'];
  const probe = asSandboxUser(options, [
    ...bwrap,
    '--symlink',
    'usr/lib',
    '/lib',
    '--symlink',
    'usr/lib64',
    '/lib64',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--',
    '/bin/true',
  ]);
  const ran = spawnSync(probe.command, probe.args, { timeout: 10_000, encoding: 'utf8' });
  if (ran.status !== 0) {
    const said = `${ran.stderr ?? ''}`.trim().split('\n')[0] || ran.error?.message || `exit ${ran.status}`;
    return `bubblewrap could not create the namespaces as ${options.user} (${said}); the host needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces > 0; in a container: seccomp and AppArmor profiles that allow unshare and mount, see docs/browsers.md)`;
  }
  return null;
}

/** A user's numeric ids, from the system's user database. */
function idsOf(user: string) {
  const uid = Number(spawnSync('id', ['-u', user], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', user], { encoding: 'utf8' }).stdout.trim());
  return { uid, gid };
}

/**
 * The sandbox this host runs its browsers in, checked before the host serves: the user to run
 * them as, or null with BROWSER_SANDBOX=off (warned about at every start). Throws, saying what is
 * missing, when the sandbox cannot be built: a host never falls back to unsandboxed browsers.
 */
export function prepareSandbox(user: string | null, log: Logger): (SandboxOptions & { uid: number; gid: number }) | null {
  if (user === null) {
    log.warn(
      'BROWSER_SANDBOX=off: browsers run as this process’s user on this machine’s network, fenced only by the egress proxy and the CDP guard; never run it so with more than one tenant',
    );
    return null;
  }
  // A host that is not root cannot switch users: its browsers run as its own user, which the
  // user namespace maps to nobody of the host's (and the mount namespace hides the host's files).
  const switchUser = process.getuid?.() === 0;
  const options = { user: switchUser ? user : userInfo().username, switchUser };
  const unavailable = sandboxUnavailable(options);
  if (unavailable) {
    throw new ConfigError(
      `The browser sandbox cannot be built: ${unavailable}. Set BROWSER_SANDBOX=off only for development (docs/browsers.md, Threat model).`,
    );
  }
  log.info({ user: options.user }, 'browsers run in the sandbox');
  return { ...options, ...idsOf(options.user) };
}

/**
 * Lets the sandbox's user pass through `browsersDir` and the two folders above it
 * (`<DATA_DIR>-shared` and its `browsers`, server/infra/dataDir.ts) to a browser's own folder: search only (o+x), never listing or reading.
 * bubblewrap, running as that user, mounts the browser's folders by path. Throws, naming the
 * folder, when a folder further up keeps the user out.
 */
export function openPathTo(browsersDir: string, sandbox: SandboxOptions) {
  let dir = browsersDir;
  for (let level = 0; level < 3; level++) {
    const mode = statSync(dir).mode;
    if ((mode & 0o001) === 0) chmodSync(dir, (mode & 0o7777) | 0o001);
    dir = path.dirname(dir);
  }
  const probe = asSandboxUser(sandbox, ['test', '-x', browsersDir]);
  if (spawnSync(probe.command, probe.args).status !== 0) {
    throw new ConfigError(
      `The browser sandbox's user ${sandbox.user} cannot reach ${browsersDir}: a folder above it is closed to other users (it needs o+x, as PostgreSQL's own user does; see README)`,
    );
  }
}
