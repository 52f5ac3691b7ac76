import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { ConfigError } from '../../../config.ts';

/**
 * A cgroup per browser, so that no browser takes the machine (docs/browsers.md, "Every browser is
 * bounded"): a memory limit (its disk is a tmpfs, charged here too), a pids limit and a CPU weight
 * equal to every other browser's. The groups are made only beneath the service's own cgroup (read
 * from /proc/self/cgroup, per controller in v1), in a folder of this host's (`browserflow-<tag>`);
 * the host's own process never moves. A browser joins its groups before it runs anything: its
 * launch command is a shell that writes its own pid into each group's `cgroup.procs`, then execs
 * the sandbox (`joinCommand`).
 *
 * The limits are on the browser's group and its processes in a leaf below it (`<id>/run`): the
 * sandbox's cgroup namespace is rooted at the leaf, so the limit files are outside anything the
 * browser can mount, even where it runs as the host's own user (compose) and so owns them. What
 * it may change in its leaf cannot loosen the group's limits above it (v1: `memory.use_hierarchy`
 * is checked to be 1).
 *
 * cgroup v1 (memory, pids and cpu hierarchies) and v2 (one unified hierarchy) are both handled.
 * In v2 a cgroup that holds processes cannot hand controllers to its children ("no internal
 * processes"), so the service's cgroup must have the host in a leaf of its own: when the host's
 * cgroup is named `browserflow-host` (the compose file's entrypoint puts it there), the browsers'
 * groups go beneath its parent, the cgroup the service was given.
 */

export type BrowserLimits = { memoryBytes: number; diskBytes: number; pids: number; cpuWeight: number };

/** The leaf a v2 service puts its host process in, so that its own cgroup may delegate controllers. */
export const V2_HOST_LEAF = 'browserflow-host';
const CONTROLLERS = ['memory', 'pids', 'cpu'] as const;
type Controller = (typeof CONTROLLERS)[number];

/** Where this service's browsers' cgroups go: one folder per v1 controller, or the unified one. */
export type CgroupLayout = { version: 1; dirs: Record<Controller, string> } | { version: 2; dir: string };

type Mount = { root: string; mountPoint: string; fsType: string; superOptions: string[] };

function parseMountinfo(mountinfo: string): Mount[] {
  return mountinfo
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [left, right = ''] = line.split(' - ');
      const fields = (left as string).split(' ');
      const [fsType = '', , superOptions = ''] = right.split(' ');
      return { root: fields[3] ?? '/', mountPoint: fields[4] ?? '', fsType, superOptions: superOptions.split(',') };
    });
}

/** A cgroup path as seen through a mount whose root may be a cgroup of its own (a container's). */
function throughMount(mount: Mount, cgroupPath: string) {
  const relative =
    mount.root !== '/' && (cgroupPath === mount.root || cgroupPath.startsWith(`${mount.root}/`))
      ? cgroupPath.slice(mount.root.length)
      : cgroupPath;
  return path.join(mount.mountPoint, relative).replace(/(.)\/$/, '$1');
}

/**
 * The folders of the service's own cgroups (from `/proc/self/cgroup` and `/proc/self/mountinfo`'s
 * texts), or why there are none to use. v1 when the memory controller is in a v1 hierarchy (a
 * hybrid machine's cgroup2 mount then holds no controller); v2 when only the unified line exists.
 */
export function cgroupLayout(procSelfCgroup: string, mountinfo: string): CgroupLayout | { unavailable: string } {
  const lines = procSelfCgroup
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [id, controllers = '', ...rest] = line.split(':');
      return { id, controllers: controllers.split(',').filter(Boolean), path: rest.join(':') };
    });
  const mounts = parseMountinfo(mountinfo);
  if (lines.some((line) => line.controllers.includes('memory'))) {
    const dirs = {} as Record<Controller, string>;
    for (const controller of CONTROLLERS) {
      const line = lines.find((candidate) => candidate.controllers.includes(controller));
      const mount = mounts.find((candidate) => candidate.fsType === 'cgroup' && candidate.superOptions.includes(controller));
      if (!line || !mount) return { unavailable: `the ${controller} controller of cgroup v1 is not mounted` };
      dirs[controller] = throughMount(mount, line.path);
    }
    return { version: 1, dirs };
  }
  const unified = lines.find((line) => line.id === '0' && line.controllers.length === 0);
  const mount = mounts.find((candidate) => candidate.fsType === 'cgroup2');
  if (!unified || !mount) return { unavailable: 'neither cgroup v1’s memory controller nor cgroup v2 is mounted' };
  const own = unified.path;
  // The host alone in its leaf: the service's cgroup is the one above, which holds no process.
  const service = path.posix.basename(own) === V2_HOST_LEAF ? path.posix.dirname(own) : own;
  return { version: 2, dir: throughMount(mount, service) };
}

/** The files (beneath a browser's group folder) and values that set `limits`, in the order they must be written. */
export function limitFiles(version: 1 | 2, limits: BrowserLimits, present: (file: string) => boolean) {
  const writes: { controller: Controller | 'unified'; file: string; value: string }[] = [];
  if (version === 1) {
    writes.push({ controller: 'memory', file: 'memory.limit_in_bytes', value: String(limits.memoryBytes) });
    // Memory plus swap, when the kernel accounts swap: no swapping past the limit. Set after the
    // memory limit, which it may never be below.
    if (present('memory.memsw.limit_in_bytes'))
      writes.push({ controller: 'memory', file: 'memory.memsw.limit_in_bytes', value: String(limits.memoryBytes) });
    writes.push({ controller: 'pids', file: 'pids.max', value: String(limits.pids) });
    // cpu.shares is v1's weight: 1024 is its default as 100 is cpu.weight's.
    writes.push({ controller: 'cpu', file: 'cpu.shares', value: String(Math.max(2, Math.round((limits.cpuWeight * 1024) / 100))) });
    return writes;
  }
  writes.push({ controller: 'unified', file: 'memory.max', value: String(limits.memoryBytes) });
  if (present('memory.swap.max')) writes.push({ controller: 'unified', file: 'memory.swap.max', value: '0' });
  // The whole browser goes at once when the kernel kills for memory, not one of its processes.
  writes.push({ controller: 'unified', file: 'memory.oom.group', value: '1' });
  writes.push({ controller: 'unified', file: 'pids.max', value: String(limits.pids) });
  writes.push({ controller: 'unified', file: 'cpu.weight', value: String(limits.cpuWeight) });
  return writes;
}

/** The kernel's count of processes it killed for memory in a group, from memory.oom_control (v1) or memory.events (v2). */
export function oomKillsIn(text: string) {
  const match = /^oom_kill (\d+)$/m.exec(text);
  return match ? Number(match[1]) : 0;
}

/** The leaf below a browser's group that its processes are in. */
const LEAF = 'run';

/** One browser's groups: `dirs` hold its limits, their leaves (`run`) its processes. */
export class BrowserCgroup {
  readonly #dirs: string[];
  readonly #oomFiles: string[];

  /** `oomFiles`: where the kernel counts its kills for memory (v1: the leaf the victim was in; v2: the group, which counts its leaf's). */
  constructor(dirs: string[], oomFiles: string[]) {
    this.#dirs = dirs;
    this.#oomFiles = oomFiles;
  }

  /** The files the browser's first process writes its pid to (`joinCommand`). */
  get procsFiles() {
    return this.#dirs.map((dir) => path.join(dir, LEAF, 'cgroup.procs'));
  }

  /** Whether the kernel killed one of its processes for memory: the browser went past its limit. */
  outOfMemory() {
    return this.#oomFiles.some((file) => {
      try {
        return oomKillsIn(readFileSync(file, 'utf8')) > 0;
      } catch {
        return false;
      }
    });
  }

  /** SIGKILLs every process of the browser, at once (its group knows them all, wherever they forked). */
  kill() {
    for (const dir of this.#dirs) killProcessesIn(dir);
  }

  /** Kills what is left and removes the groups (a group goes only once its processes have). */
  async remove() {
    await removeGroups(this.#dirs);
  }
}

/**
 * SIGKILLs every process of the group at `dir` and of its leaves. v2 (kernel 5.14+) has the
 * kernel do it (`cgroup.kill`), with no pid in between that could have been reused. v1 names
 * pids, and a pid read from `cgroup.procs` may have exited and been reused by the time it is
 * killed: each is checked to be in the group right before its kill.
 */
function killProcessesIn(dir: string) {
  const killFile = path.join(dir, 'cgroup.kill');
  if (existsSync(killFile)) {
    try {
      writeFileSync(killFile, '1');
      return;
    } catch {
      // not writable here: by pid below
    }
  }
  for (const group of [...subgroupsOf(dir), dir]) {
    const mark = groupMark(group);
    for (const pid of pidsIn(group)) {
      if (!mark || !inGroup(pid, mark)) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
}

function subgroupsOf(dir: string) {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => path.join(dir, entry.name));
  } catch {
    return [];
  }
}

/**
 * A group's path from its host's folder (`/browserflow-<tag>/<id>/run`), the part that reads the
 * same in the file system and in `/proc/<pid>/cgroup` whatever cgroup namespace the host is in.
 */
function groupMark(dir: string) {
  const at = dir.lastIndexOf('/browserflow-');
  return at < 0 ? null : dir.slice(at);
}

/** Whether `/proc/<pid>/cgroup` puts the process in the group `mark` names (for some controller). */
function inGroup(pid: number, mark: string) {
  try {
    return readFileSync(`/proc/${pid}/cgroup`, 'utf8')
      .split('\n')
      .some((line) => line.endsWith(mark));
  } catch {
    return false;
  }
}

function pidsIn(dir: string) {
  try {
    return readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** How long removing a group waits for its killed processes to exit. */
const REMOVE_WAIT_MS = 5_000;

async function removeGroups(dirs: readonly string[]) {
  const until = Date.now() + REMOVE_WAIT_MS;
  for (const dir of dirs) {
    for (;;) {
      killProcessesIn(dir);
      try {
        // The leaf first: a group goes only once it has no child.
        for (const leaf of subgroupsOf(dir)) rmdirSync(leaf);
        rmdirSync(dir);
        break;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') break;
        // EBUSY: killed processes not yet reaped. Past the wait, the host's next start removes it.
        if (Date.now() > until) break;
        await sleep(50);
      }
    }
  }
}

/**
 * This host's cgroups: one folder per controller (v1) or one (v2), named for its browsers' folder,
 * so hosts sharing the service's cgroup (tests, several hosts of one machine) never touch each other's.
 */
export class BrowserCgroups {
  readonly #layout: CgroupLayout;
  readonly #limits: BrowserLimits;
  readonly #tag: string;

  private constructor(layout: CgroupLayout, limits: BrowserLimits, browsersDir: string) {
    this.#layout = layout;
    this.#limits = limits;
    this.#tag = `browserflow-${createHash('sha256').update(browsersDir).digest('hex').slice(0, 12)}`;
  }

  get limits() {
    return this.#limits;
  }

  /** The folders holding this host's browsers' groups. */
  get #hostDirs() {
    return this.#layout.version === 1
      ? CONTROLLERS.map((controller) => path.join((this.#layout as { dirs: Record<Controller, string> }).dirs[controller], this.#tag))
      : [path.join((this.#layout as { dir: string }).dir, this.#tag)];
  }

  /**
   * This host's cgroups, made and checked before it serves (a probe group gets every limit), or a
   * ConfigError saying why they cannot be: a host never runs unbounded browsers unawares.
   */
  static prepare(limits: BrowserLimits, browsersDir: string, files = { cgroup: '/proc/self/cgroup', mountinfo: '/proc/self/mountinfo' }) {
    const layout = cgroupLayout(readFileSync(files.cgroup, 'utf8'), readFileSync(files.mountinfo, 'utf8'));
    if ('unavailable' in layout) throw new ConfigError(`The browsers' cgroups cannot be made: ${layout.unavailable}`);
    const cgroups = new BrowserCgroups(layout, limits, browsersDir);
    try {
      if (layout.version === 2) {
        // Hand memory, pids and cpu down: to this host's folder, and from it to each browser's.
        const controllers = CONTROLLERS.map((controller) => `+${controller}`).join(' ');
        writeFileSync(path.join(layout.dir, 'cgroup.subtree_control'), controllers);
        mkdirSync(cgroups.#hostDirs[0] as string, { recursive: true });
        writeFileSync(path.join(cgroups.#hostDirs[0] as string, 'cgroup.subtree_control'), controllers);
      } else {
        for (const dir of cgroups.#hostDirs) mkdirSync(dir, { recursive: true });
      }
      cgroups.#applyLimits('probe');
      removeGroupsNow(cgroups.#browserDirs('probe'));
    } catch (error) {
      const why = (error as NodeJS.ErrnoException).code === 'EBUSY' && layout.version === 2 ? V2_BUSY : (error as Error).message;
      throw new ConfigError(`The browsers' cgroups cannot be made beneath this service's cgroup: ${why}`);
    }
    return cgroups;
  }

  /** Makes the groups of a new browser, with its limits. */
  create(id: string) {
    this.#applyLimits(id);
    // The memory controller's group comes first (CONTROLLERS); in v2 it is the only one.
    const dirs = this.#browserDirs(id);
    const memory = dirs[0] as string;
    return new BrowserCgroup(
      dirs,
      this.#layout.version === 1
        ? // v1 counts a kill in the victim's own group alone (the leaf), and not in the group above.
          [path.join(memory, LEAF, 'memory.oom_control'), path.join(memory, 'memory.oom_control')]
        : [path.join(memory, 'memory.events')],
    );
  }

  /** Kills the processes of groups a previous run of this host left, and removes the groups. */
  async removeLeftovers() {
    const leftovers = this.#hostDirs.flatMap((dir) =>
      readdirSync(dir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => path.join(dir, entry.name)),
    );
    await removeGroups(leftovers);
    return leftovers.length;
  }

  /** Removes this host's folders once its browsers are gone (one still busy stays for the next start). */
  close() {
    for (const dir of this.#hostDirs) {
      try {
        rmdirSync(dir);
      } catch {
        // a browser's group is still there: the next start of this host removes it
      }
    }
  }

  #browserDirs(id: string) {
    return this.#hostDirs.map((dir) => path.join(dir, id));
  }

  #applyLimits(id: string) {
    const dirs = this.#browserDirs(id);
    for (const dir of dirs) mkdirSync(dir, { recursive: true });
    const memory = dirs[0] as string;
    if (this.#layout.version === 1) requireHierarchy(memory);
    const dirOf = (controller: Controller | 'unified') =>
      this.#layout.version === 1 ? path.join(this.#layout.dirs[controller as Controller], this.#tag, id) : memory;
    for (const write of limitFiles(this.#layout.version, this.#limits, (file) => existsSync(path.join(memory, file)))) {
      writeFileSync(path.join(dirOf(write.controller), write.file), write.value);
    }
    // In v2 the group hands no controller down: its leaf's processes count in the group's own
    // memory, pids and cpu, and the group holds no process itself (no internal processes).
    for (const dir of dirs) mkdirSync(path.join(dir, LEAF));
  }
}

const V2_BUSY = `cgroup v2 lets no cgroup that holds processes hand its controllers to children, and the host's holds it: start the host alone in a leaf named ${V2_HOST_LEAF} below the cgroup given to the service (temporal-compose.yml's browser host does), and its browsers' groups go beside it`;

function removeGroupsNow(dirs: readonly string[]) {
  for (const dir of dirs) {
    rmdirSync(path.join(dir, LEAF));
    rmdirSync(dir);
  }
}

/**
 * v1 holds a child to its parent's memory limit only with `memory.use_hierarchy` 1 (always, since
 * Linux 5.11; before, inherited, 0 at the root): set before the leaf exists, and checked.
 */
function requireHierarchy(memoryDir: string) {
  const file = path.join(memoryDir, 'memory.use_hierarchy');
  if (!existsSync(file)) return;
  if (readFileSync(file, 'utf8').trim() !== '1') writeFileSync(file, '1');
  if (readFileSync(file, 'utf8').trim() !== '1')
    throw new Error('memory.use_hierarchy is 0 and cannot be set: a group’s memory limit would not hold its children');
}

/**
 * `command` started inside `cgroup`: a shell writes its own pid into each group's `cgroup.procs`,
 * then execs it, so nothing of the browser ever runs outside (same pid, so the host's pid of the
 * browser is unchanged). Exit 125 with a line on stderr when a group refuses it.
 */
export function joinCommand(cgroup: BrowserCgroup, command: { command: string; args: string[] }) {
  const script =
    'for f in "$@"; do [ "$f" = -- ] && break; echo $$ > "$f" || { echo "could not join the cgroup $f" >&2; exit 125; }; shift; done; shift; exec "$@"';
  return { command: '/bin/sh', args: ['-c', script, 'sh', ...cgroup.procsFiles, '--', command.command, ...command.args] };
}

/**
 * The cgroups of a host's browsers, or null with BROWSER_SANDBOX=off where they cannot be made
 * (development, as an ordinary user): warned about at every start. With the sandbox on, a host
 * that cannot make them refuses to start (ConfigError).
 */
export function prepareCgroups(
  limits: BrowserLimits,
  browsersDir: string,
  options: { sandbox: boolean; log: Logger; files?: { cgroup: string; mountinfo: string } },
) {
  try {
    const cgroups = BrowserCgroups.prepare(limits, browsersDir, options.files);
    options.log.info(
      { memoryMb: limits.memoryBytes / 2 ** 20, diskMb: limits.diskBytes / 2 ** 20, pids: limits.pids, cpuWeight: limits.cpuWeight },
      'browsers run in cgroups of their own',
    );
    return cgroups;
  } catch (error) {
    if (options.sandbox)
      throw error instanceof ConfigError
        ? new ConfigError(`${error.message}. A host needs write access to its cgroup (docs/browsers.md, Every browser is bounded).`)
        : error;
    options.log.warn(`BROWSER_SANDBOX=off and ${(error as Error).message}: browsers run without memory, pids or CPU limits`);
    return null;
  }
}
