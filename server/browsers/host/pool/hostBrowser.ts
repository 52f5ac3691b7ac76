import type { LaunchedBrowser } from '../chromium/chromiumProcess.ts';
import type { BrowserDownloads } from '../downloads/browserDownloads.ts';
import type { BrowserRecorder } from '../recording/browserRecorder.ts';
import type { BrowserLog } from './browserLogs.ts';

/** A browser of this host as the pool holds it: running for a resource, or warm (resource to come). */
export type HostBrowser = LaunchedBrowser & {
  /** Set on warm browsers: the id they are offered under. */
  warmId?: string;
  /** Measured since it became a resource's (its first measurement is its billing baseline). */
  measured?: boolean;
  resourceId: string;
  projectId: string;
  /** Set on warm browsers: when it was ready to hand out (ms); one above the pool's target waiting long enough is retired. */
  warmSince?: number;
  /** Set on warm browsers once their offer is written to `warm_browsers`. */
  offered?: boolean;
  networkBytes: number;
  log: BrowserLog;
  warm: boolean;
  /** First found unwanted by the orphan cleanup at this time (ms). */
  unwantedSince?: number;
  /** Set once the kernel killed a process of it for memory: the whole browser was ended then. */
  outOfMemory?: boolean;
  /** Its downloads, once the pool watches it (a browser running elsewhere has none of the host's). */
  downloads?: BrowserDownloads;
  /** Set once it records its pages (a session's `record`, or a run's). */
  recorder?: BrowserRecorder;
};
