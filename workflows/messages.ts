import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

/** Messages of the browserSession workflow; the api imports these definitions. */

export type BrowserPhase = 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';

export type BrowserSessionState = { phase: BrowserPhase; hostId?: string; reason?: string };

/** Waits until the browser is usable (or failed) and answers the state. */
export const awaitReadyUpdate = defineUpdate<BrowserSessionState>('awaitReady');

/** Stops the browser; answers once it is stopped. */
export const stopBrowserUpdate = defineUpdate<BrowserSessionState, [reason: string]>('stop');

/** Stops the browser without waiting (from another workflow, e.g. a run that started it). */
export const stopBrowserSignal = defineSignal<[reason: string]>('stopBrowser');

export const browserStateQuery = defineQuery<BrowserSessionState>('state');

/** What the workflow is started with: the host the api picked, and the limits in force. */
export type BrowserSessionInput = {
  hostId: string;
  idleTimeoutSeconds: number;
  maxLifetimeSeconds: number;
  /** A warm browser the api claimed and already answered with: the host adopts it, no launch. */
  adoptWarmId?: string;
};
