import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

import type { MeterAction } from './billing.ts';

/**
 * The contract of `browserSessionWorkflow` (workflows/browserSession.ts): what it is started
 * with, the messages the api and other workflows send it, the activities it calls (on the control
 * queue and on the host that runs its browser), and the failure types those throw that no retry
 * can mend. The api and the activities import this module, never the workflow's internals.
 */

export type BrowserPhase = 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';

export type BrowserSessionState = { phase: BrowserPhase; hostId?: string; reason?: string };

/** What the workflow is started with: the host the api picked, and the limits in force. */
export type BrowserSessionInput = {
  hostId: string;
  idleTimeoutSeconds: number;
  maxLifetimeSeconds: number;
  /** A warm browser the api claimed and already answered with: the host adopts it, no launch. */
  adoptWarmId?: string;
};

/** What a continue-as-new carries over. */
export type BrowserSessionResume = {
  deadline: number;
  /**
   * The cumulative usage a warm browser had when this resource took it over (its launch and idle
   * time are the pool's, not the project's). Absent for a browser launched for the resource.
   */
  baseline?: BrowserUsage;
};

export type BrowserSessionWorkflow = (
  resourceId: string,
  input: BrowserSessionInput,
  resume?: BrowserSessionResume,
) => Promise<BrowserSessionState>;
/** Its workflow type: the api starts it by this name (server/browsers/sessions/browserSessions.ts). */
export const browserSessionWorkflowType = 'browserSessionWorkflow';

/** Waits until the browser is usable (or failed) and answers the state. */
export const awaitReadyUpdate = defineUpdate<BrowserSessionState>('awaitReady');

/** Stops the browser; answers once it is stopped. */
export const stopBrowserUpdate = defineUpdate<BrowserSessionState, [reason: string]>('stop');

/** Stops the browser without waiting (from another workflow, e.g. a run that started it). */
export const stopBrowserSignal = defineSignal<[reason: string]>('stopBrowser');

/**
 * From the browser's host: the browser ended without a stop (it crashed, or was killed). The
 * workflow checks it at once instead of at its next check, and settles it with the true reason.
 */
export const browserEndedSignal = defineSignal('browserEnded');

export const browserStateQuery = defineQuery<BrowserSessionState>('state');

/** A browser's cumulative figures, as its host measures them. */
/**
 * How often a browser's workflow asks its host whether the browser lives, and meters its usage; a
 * host meters its project browsers for calls as often (server/browsers/host/callMetering.ts).
 */
export const browserCheckIntervalMs = 5_000;

export type BrowserUsage = { cpuSeconds: number; memoryBytes: number; networkBytes: number };

/** The workflow's activities on the control queue (activities/browserSessions.ts): database only. */
export type BrowserSessionActivities = {
  markResource(resourceId: string, change: { status: 'stopping' | 'stopped' | 'failed'; reason?: string }): Promise<void>;
  /** Stores and meters the usage; answers when the resource was last used, and whether it may go on. */
  recordUsage(resourceId: string, usage: BrowserUsage): Promise<{ lastActivity: string | null; action: MeterAction }>;
};

/** The workflow's activities on its browser's host (activities/browserHost/browserSession.ts). */
export type BrowserSessionHostActivities = {
  adoptWarmBrowser(resourceId: string, warmId: string): Promise<void>;
  launchBrowser(resourceId: string): Promise<{ cdpEndpoint: string; pid: number | null; warm: boolean }>;
  /**
   * `known`: the host's process holds the browser (false when it was restarted since the launch,
   * and its browsers died with the process before; absent from hosts older than this field).
   */
  /** `ended`: why a browser that is not alive ended, when its host knows (it went past its memory limit). */
  checkBrowser(resourceId: string): Promise<{ alive: boolean; usage: BrowserUsage | null; known?: boolean; ended?: 'out_of_memory' }>;
  /** Idempotent; answers whether there was a browser to stop. */
  stopBrowser(resourceId: string): Promise<boolean>;
};

/** The task queue of one browser host: its activities launch, check and stop its browsers and run pipeline nodes. */
export function browserHostQueue(hostId: string) {
  return `browsers.${hostId}`;
}

/** Failure types of the host's launch activities that another attempt cannot mend. */
export const launchFailures = {
  /** The host already runs its maximum of browsers. */
  capacityReached: 'CapacityReached',
  /** The host is draining (shutting down): it takes no new browsers. */
  hostDraining: 'HostDraining',
  /** The warm browser the api claimed is not on this host (it restarted since). */
  warmBrowserGone: 'WarmBrowserGone',
  /** The resource row is gone. */
  resourceMissing: 'ResourceMissing',
  /** The proxy password is sealed under another service secret. */
  proxyPasswordUnreadable: 'ProxyPasswordUnreadable',
  /** The session's stored launch flags are not all on the allow-list (server/browsers/launch/launchSettings.ts). */
  launchArgsRefused: 'LaunchArgsRefused',
} as const;
