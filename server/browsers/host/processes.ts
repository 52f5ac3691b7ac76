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

/** CPU seconds and resident memory of a process and all its descendants. */
export function measureProcessTree(rootPid: number) {
  const procs = allPids()
    .map(readProc)
    .filter((p): p is ProcInfo => p !== null);
  const children = new Map<number, ProcInfo[]>();
  for (const proc of procs) {
    const list = children.get(proc.ppid) ?? [];
    list.push(proc);
    children.set(proc.ppid, list);
  }
  const root = procs.find((p) => p.pid === rootPid);
  if (!root) return null;
  let cpuTicks = 0;
  let rssPages = 0;
  const queue = [root];
  while (queue.length) {
    const proc = queue.pop() as ProcInfo;
    cpuTicks += proc.cpuTicks;
    rssPages += proc.rssPages;
    queue.push(...(children.get(proc.pid) ?? []));
  }
  return { cpuSeconds: cpuTicks / CLOCK_TICKS, memoryBytes: rssPages * PAGE_SIZE };
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
