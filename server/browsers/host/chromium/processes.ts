import { readdirSync, readFileSync } from 'node:fs';

/** Reads of /proc for the browser host: process trees, CPU time and memory, orphan search. */

const CLOCK_TICKS = 100; // sysconf(_SC_CLK_TCK) on Linux
const PAGE_SIZE = 4096;

type ProcInfo = { pid: number; ppid: number; cpuTicks: number; rssPages: number };

function readProc(pid: number): ProcInfo | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may contain spaces: split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return {
      pid,
      ppid: Number(fields[1]),
      // utime + stime, and cutime + cstime: the time of children it has reaped. Chromium's
      // zygote reaps renderers that exit; without their time the tree's total would drop.
      cpuTicks: Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]),
      rssPages: Number(fields[21]),
    };
  } catch {
    return null;
  }
}

function allPids() {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

export type ProcessSnapshot = { at: number; byPid: Map<number, ProcInfo>; children: Map<number, ProcInfo[]> };

/** Every process on the machine, with its parent, CPU ticks and resident pages: one pass over /proc. */
export function readProcessTable(): ProcessSnapshot {
  const byPid = new Map<number, ProcInfo>();
  const children = new Map<number, ProcInfo[]>();
  for (const pid of allPids()) {
    const proc = readProc(pid);
    if (!proc) continue;
    byPid.set(pid, proc);
    const list = children.get(proc.ppid) ?? [];
    list.push(proc);
    children.set(proc.ppid, list);
  }
  return { at: Date.now(), byPid, children };
}

/** A process and all its descendants, as `table` saw them; empty when it did not see `rootPid`. */
export function processTree(table: ProcessSnapshot, rootPid: number) {
  const root = table.byPid.get(rootPid);
  const tree: ProcInfo[] = [];
  const queue = root ? [root] : [];
  while (queue.length) {
    const proc = queue.pop() as ProcInfo;
    tree.push(proc);
    queue.push(...(table.children.get(proc.pid) ?? []));
  }
  return tree;
}

/** CPU seconds of a process tree: each process's own and that of the children it reaped. */
export function cpuSecondsOf(tree: readonly ProcInfo[]) {
  return tree.reduce((ticks, proc) => ticks + proc.cpuTicks, 0) / CLOCK_TICKS;
}

function treeUsage(table: ProcessSnapshot, rootPid: number) {
  const tree = processTree(table, rootPid);
  if (!tree.length) return null;
  return { cpuSeconds: cpuSecondsOf(tree), memoryBytes: tree.reduce((pages, proc) => pages + proc.rssPages, 0) * PAGE_SIZE };
}

/** CPU seconds and resident memory of a process and all its descendants, read now. */
export function measureProcessTree(rootPid: number) {
  return treeUsage(readProcessTable(), rootPid);
}

/**
 * The machine's processes, read at most once per `maxAgeMs` and shared by every measurement. A
 * browser host measures each of its browsers every few seconds, and one read of /proc costs in
 * proportion to every process on the machine (about 13 ms of CPU at 900 processes): read per
 * measurement, the host's own CPU would grow with the square of its browsers. Usage is cumulative,
 * so a figure up to `maxAgeMs` old is only billed a moment later.
 */
export class ProcessTable {
  readonly #maxAgeMs: number;
  #table: ProcessSnapshot | undefined;

  constructor(maxAgeMs: number) {
    this.#maxAgeMs = maxAgeMs;
  }

  /** As `measureProcessTree`; `fresh` reads /proc now, as does a root the last read did not see (just launched). */
  measureTree(rootPid: number, options: { fresh?: boolean } = {}) {
    const stale = !this.#table || options.fresh || Date.now() - this.#table.at > this.#maxAgeMs;
    if (stale || !this.#table?.byPid.has(rootPid)) this.#table = readProcessTable();
    return treeUsage(this.#table, rootPid);
  }
}

export function isAlive(pid: number) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pids whose command line mentions `marker` (our browsers carry their user-data-dir in it). */
export function findProcessesMentioning(marker: string) {
  const found: number[] = [];
  for (const pid of allPids()) {
    if (pid === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cmdline.includes(marker)) found.push(pid);
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/**
 * Kills (SIGKILL) these processes and the process groups they lead or belong to, at once and
 * synchronously: for an exit that cannot wait. Our browsers run each in its own group.
 */
export function killProcessGroupsOf(pids: readonly number[]) {
  // Never our own group: that would take this process (and npm, its leader) down with them.
  const ownGroup = processGroupOf('self');
  for (const pid of pids) {
    const group = processGroupOf(pid);
    for (const target of group && group > 1 && group !== ownGroup ? [-group, pid] : [pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

/** The process group of `pid` (field 5 of /proc/<pid>/stat); undefined once it has exited. */
function processGroupOf(pid: number | 'self') {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return undefined;
  }
}
