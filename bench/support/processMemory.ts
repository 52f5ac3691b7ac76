import { readFileSync } from 'node:fs';
import { cpuSecondsOf, processTree, readProcessTable } from '../../server/browsers/host/chromium/processes.ts';

/**
 * Memory and CPU of process trees, for the density benchmark. Per process: RSS (resident pages,
 * shared ones counted in every process that maps them), PSS (shared pages split between the
 * processes that map them) and USS (private pages: what the machine gets back when the process
 * exits). A browser's figures are the sums over its tree.
 */

function readMemory(pid: number) {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(rollup)?.[1] ?? 0) * 1024;
    return { rss: kb('Rss'), pss: kb('Pss'), uss: kb('Private_Clean') + kb('Private_Dirty') };
  } catch {
    return { rss: 0, pss: 0, uss: 0 };
  }
}

export type TreeUsage = { processes: number; rss: number; pss: number; uss: number; cpuSeconds: number };

/** The usage of each tree rooted at `roots`, from one pass over /proc. */
export function measureTrees(roots: number[]): TreeUsage[] {
  const table = readProcessTable();
  return roots.map((root) => {
    const tree = processTree(table, root);
    const usage: TreeUsage = { processes: tree.length, rss: 0, pss: 0, uss: 0, cpuSeconds: cpuSecondsOf(tree) };
    for (const proc of tree) {
      const memory = readMemory(proc.pid);
      usage.rss += memory.rss;
      usage.pss += memory.pss;
      usage.uss += memory.uss;
    }
    return usage;
  });
}

/** The machine's available memory (MemAvailable), in bytes. */
export function memoryAvailable() {
  return Number(/^MemAvailable:\s+(\d+)/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0) * 1024;
}
