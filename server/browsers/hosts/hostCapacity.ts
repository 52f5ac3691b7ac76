import os from 'node:os';

/**
 * The default of `BROWSERS_PER_HOST`: what this machine holds, from its memory and cores, with the
 * figures bench/browser-density.ts measured (docs/browsers.md, Sizing a host).
 */

/**
 * Memory set aside per browser. An idle browser on a small page takes about 110 MB (the PSS of its
 * processes) and the service's process a few MB more for it; real pages take more, so over twice that.
 */
export const MEMORY_PER_BROWSER = 256 * 2 ** 20;

/** The share of the machine's memory its browsers may take; the rest is the system's and the service's. */
export const BROWSER_MEMORY_SHARE = 0.75;

/**
 * Browsers per core. The benchmark kept the median start → usable under 1 s with 80 idle browsers
 * on 2 cores (and was stopped by its time budget, not by slow starts); 32 per core stays below.
 */
export const BROWSERS_PER_CORE = 32;

/** The most `BROWSERS_PER_HOST` may be (the config's own bound). */
export const MAX_BROWSERS_PER_HOST = 500;

/** The memory this process may use: the machine's, or its cgroup's limit when lower. */
function usableMemory() {
  const limit = process.constrainedMemory();
  return limit > 0 ? Math.min(limit, os.totalmem()) : os.totalmem();
}

export function defaultBrowsersPerHost(machine = { memoryBytes: usableMemory(), cores: os.availableParallelism() }) {
  const byMemory = Math.floor((machine.memoryBytes * BROWSER_MEMORY_SHARE) / MEMORY_PER_BROWSER);
  return Math.max(1, Math.min(MAX_BROWSERS_PER_HOST, byMemory, BROWSERS_PER_CORE * machine.cores));
}

/**
 * How many more browsers this machine's memory holds now: its available memory (the kernel's
 * MemAvailable, or what its cgroup leaves) less the share kept for the system and the service
 * (1 − BROWSER_MEMORY_SHARE of the usable memory), at MEMORY_PER_BROWSER each. The warm pool grows
 * above its floor only into this room (server/browsers/host/pool/warmPolicy.ts).
 */
export function spareBrowsers(machine = { availableBytes: process.availableMemory(), memoryBytes: usableMemory() }) {
  const reserve = machine.memoryBytes * (1 - BROWSER_MEMORY_SHARE);
  return Math.max(0, Math.floor((machine.availableBytes - reserve) / MEMORY_PER_BROWSER));
}

/**
 * Warm launches a host runs at once: one per core. A Chromium launch is a burst of CPU on about one
 * core (its browser and GPU-less renderer processes start in turn), so more at once only share the
 * cores and each takes longer; fewer leave cores idle while a burst of starts drains the pool.
 */
export function warmLaunchConcurrency(cores = os.availableParallelism()) {
  return Math.max(1, cores);
}
