import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

/**
 * The contract of `browserSessionWorkflow` (workflows/browserSession.ts): what it is started
 * with, the messages the api and other workflows send it, the queue of the host that runs its
 * browser, and the failure types its activities throw that no retry can mend. The api and the
 * activities import this module, never the workflow's internals.
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

/** Waits until the browser is usable (or failed) and answers the state. */
export const awaitReadyUpdate = defineUpdate<BrowserSessionState>('awaitReady');

/** Stops the browser; answers once it is stopped. */
export const stopBrowserUpdate = defineUpdate<BrowserSessionState, [reason: string]>('stop');

/** Stops the browser without waiting (from another workflow, e.g. a run that started it). */
export const stopBrowserSignal = defineSignal<[reason: string]>('stopBrowser');

export const browserStateQuery = defineQuery<BrowserSessionState>('state');

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
} as const;
