import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  patched,
  proxyActivities,
  setHandler,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import { FUNDS_EXHAUSTED } from './contracts/billing.ts';
import {
  awaitReadyUpdate,
  type BrowserSessionActivities,
  type BrowserSessionHostActivities,
  type BrowserSessionState,
  type BrowserSessionWorkflow,
  type BrowserUsage,
  browserCheckIntervalMs,
  browserEndedSignal,
  browserHostQueue,
  browserStateQuery,
  stopBrowserSignal,
  stopBrowserUpdate,
} from './contracts/browserSession.ts';
import { retryPolicies } from './retryPolicies.ts';

/**
 * A host that does not pick up a check (or a stop) in this time is taken as lost: the resource
 * settles `failed` within a check interval and this of the host's death, well inside a minute.
 */
const HOST_PICKUP_TIMEOUT = '15 seconds';
/**
 * A launch's bound (server/browsers/host/chromium/chromiumProcess.ts, LAUNCH_BOUND_MS and its cleanup) stays
 * well inside this, so the launch's own failure is what the workflow sees.
 */
export const LAUNCH_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT = '20 seconds';

const settle = proxyActivities<BrowserSessionActivities>({ startToCloseTimeout: '20 seconds', retry: retryPolicies.settleBrowser });
const metering = proxyActivities<BrowserSessionActivities>({ startToCloseTimeout: '10 seconds', retry: retryPolicies.metering });

function hostActivities(hostId: string) {
  const taskQueue = browserHostQueue(hostId);
  return {
    launch: proxyActivities<BrowserSessionHostActivities>({
      taskQueue,
      scheduleToStartTimeout: HOST_PICKUP_TIMEOUT,
      startToCloseTimeout: LAUNCH_TIMEOUT_MS,
      retry: retryPolicies.browserLaunch,
    }),
    check: proxyActivities<BrowserSessionHostActivities>({
      taskQueue,
      scheduleToStartTimeout: HOST_PICKUP_TIMEOUT,
      startToCloseTimeout: '10 seconds',
      retry: retryPolicies.hostTwice,
    }),
    stop: proxyActivities<BrowserSessionHostActivities>({
      taskQueue,
      scheduleToStartTimeout: HOST_PICKUP_TIMEOUT,
      startToCloseTimeout: STOP_TIMEOUT,
      retry: retryPolicies.browserStop,
    }),
  };
}

/** The usage a resource is billed: the host's cumulative figures since it took the browser. */
function sinceAdoption(usage: BrowserUsage, baseline: BrowserUsage | undefined): BrowserUsage {
  if (!baseline) return usage;
  return {
    cpuSeconds: Math.max(0, usage.cpuSeconds - baseline.cpuSeconds),
    memoryBytes: usage.memoryBytes,
    networkBytes: Math.max(0, usage.networkBytes - baseline.networkBytes),
  };
}

/**
 * The whole life of one browser (a session resource). Workflow id `browser-<resourceId>`.
 * It launches the browser on a host, then lives until a stop, the idle timeout, the maximum
 * lifetime, the browser's exit, or the loss of its host, and always ends by settling the
 * resource as stopped (or failed) — a crash of any process loses no browser and leaks none.
 */
export const browserSessionWorkflow: BrowserSessionWorkflow = async (resourceId, input, resume) => {
  const state: BrowserSessionState = { phase: resume ? 'running' : 'starting' };
  let stopReason: string | undefined;
  /** The stop was asked for (signal or update), not found by a check. */
  let stopRequested = false;
  /** The host saw the browser end: the next check is due now. */
  let checkNow = false;

  setHandler(browserStateQuery, () => state);
  setHandler(browserEndedSignal, () => {
    checkNow = true;
  });
  setHandler(stopBrowserSignal, (reason: string) => {
    stopRequested ||= stopReason === undefined;
    stopReason ??= reason;
  });
  setHandler(awaitReadyUpdate, async () => {
    await condition(() => state.phase !== 'starting');
    return state;
  });
  setHandler(
    stopBrowserUpdate,
    async (reason: string) => {
      stopRequested ||= stopReason === undefined;
      stopReason ??= reason;
      await condition(() => state.phase === 'stopped' || state.phase === 'failed');
      return state;
    },
    // Rejected before it enters history: the reason is what the resource's row and log will say.
    { validator: validStopReason },
  );

  const hostId = input.hostId;
  state.hostId = hostId;
  let deadline = resume?.deadline ?? Date.now() + input.maxLifetimeSeconds * 1000;
  let baseline = resume?.baseline;
  /** A warm browser's baseline is still to be taken (its first measurement after adoption). */
  let needsBaseline = false;

  if (!resume) {
    try {
      if (stopReason) throw ApplicationFailure.nonRetryable(stopReason, 'StoppedBeforeStart');
      if (input.adoptWarmId) {
        // Already running and answered by the api; the host takes it over.
        state.phase = 'running';
        await hostActivities(hostId).launch.adoptWarmBrowser(resourceId, input.adoptWarmId);
        needsBaseline = true;
      } else {
        // The host records the resource as running itself: one round trip less before the answer.
        await hostActivities(hostId).launch.launchBrowser(resourceId);
      }
      deadline = Date.now() + input.maxLifetimeSeconds * 1000;
      state.phase = 'running';
    } catch (error) {
      const reason = failureMessage(error);
      // A launch that timed out may still have started a browser: make sure it is gone.
      await hostActivities(hostId)
        .stop.stopBrowser(resourceId)
        .catch(() => undefined);
      await settle.markResource(resourceId, { status: 'failed', reason: `could not start: ${reason}` });
      state.phase = 'failed';
      state.reason = reason;
      await condition(allHandlersFinished);
      return state;
    }
  }

  const host = hostActivities(hostId);
  // Patched: a workflow that adopted its browser before this step existed replays without it.
  if (needsBaseline && patched('warm-usage-baseline')) {
    // At once, not at the first check: what the client does from here on is the resource's.
    // The client may have used the browser between the api's answer and this adoption; that
    // sliver goes unbilled rather than the pool's time being billed.
    try {
      baseline = (await host.check.checkBrowser(resourceId)).usage ?? undefined;
    } catch {
      // The loop's first check finds out what became of the host; it takes the baseline then.
    }
    needsBaseline = baseline === undefined;
  }
  let hostLost = false;
  while (!stopReason) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      stopReason = 'maximum lifetime reached';
      break;
    }
    // Histories without the host's signal wait as they did: the signal only ends a wait sooner.
    await condition(() => stopReason !== undefined || checkNow, Math.min(browserCheckIntervalMs, remaining));
    if (stopReason !== undefined) break;
    checkNow = false;
    let check: Awaited<ReturnType<BrowserSessionHostActivities['checkBrowser']>>;
    try {
      check = await host.check.checkBrowser(resourceId);
    } catch (error) {
      hostLost = true;
      stopReason = hostLostReason(hostId, error);
      break;
    }
    if (!check.alive || !check.usage) {
      const ended = endedReason(hostId, check);
      hostLost = ended.hostLost;
      stopReason = ended.reason;
      break;
    }
    if (needsBaseline) {
      baseline = check.usage;
      needsBaseline = false;
    }
    let lastActivity: string | null = null;
    try {
      const metered = await metering.recordUsage(resourceId, sinceAdoption(check.usage, baseline));
      lastActivity = metered.lastActivity;
      // Metering says the account's funds ran out (older activity results carry no action).
      if (metered.action === 'shutdown') {
        stopReason = FUNDS_EXHAUSTED;
        break;
      }
    } catch {
      // The database is away; the idle check waits for the next report that goes through.
    }
    if (lastActivity && Date.now() - Date.parse(lastActivity) > input.idleTimeoutSeconds * 1000) {
      stopReason = `idle for more than ${input.idleTimeoutSeconds} s`;
      break;
    }
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      return continueAsNew<BrowserSessionWorkflow>(resourceId, input, { deadline, baseline });
    }
  }

  // Asked to stop (its run ended, say, because the browser went away under it): a browser that is
  // already gone says why, not who asked. Patched: older histories stop without the check.
  if (!hostLost && stopRequested && patched(END_REASONS_PATCH)) {
    try {
      const check = await host.check.checkBrowser(resourceId);
      if (!check.alive) ({ hostLost, reason: stopReason } = endedReason(hostId, check, stopReason));
    } catch {
      // The stop below finds out what became of the host.
    }
  }
  state.phase = 'stopping';
  await settle.markResource(resourceId, { status: 'stopping', reason: stopReason });
  if (!hostLost) {
    try {
      await host.stop.stopBrowser(resourceId);
    } catch (error) {
      // The host went away meanwhile (its restart kills what it left, BrowserPool.start): one
      // that never picked the stop up is lost, and the browser with it.
      if (isPickupTimeout(error)) {
        hostLost = true;
        stopReason = `${hostLostReason(hostId, error)} (while stopping: ${stopReason})`;
      }
    }
  }
  // Patched: a workflow that settled a lost host's browser `stopped` before this replays so.
  const outcome = hostLost && patched('host-lost-fails') ? 'failed' : 'stopped';
  await settle.markResource(resourceId, { status: outcome, reason: stopReason });
  state.phase = outcome;
  state.reason = stopReason;
  await condition(allHandlersFinished);
  return state;
};

/** Runs that have a gone browser say why (`endedReason`), also when a stop request came first. */
const END_REASONS_PATCH = 'browser-end-reasons';
/** The stop reason of a browser whose Chromium exited without a stop (killed, or crashed). */
export const BROWSER_CRASHED = 'browser crashed: Chromium exited without being stopped';
/** The stop reason of a browser its host ended for going past its memory limit (BROWSER_MEMORY_LIMIT_MB). */
export const BROWSER_OUT_OF_MEMORY = 'browser crashed: out of memory (it went past its memory limit)';

/**
 * Why a browser its host reports not alive ended: Chromium went away under a host that still holds
 * it (crashed), or the host's process no longer knows it (restarted since: its browsers died with
 * the process before, so the host was lost). Older histories say "the browser exited".
 */
function endedReason(hostId: string, check: { known?: boolean; ended?: 'out_of_memory' }, requested?: string) {
  if (!patched(END_REASONS_PATCH)) return { hostLost: false, reason: 'the browser exited' };
  const why = requested ? ` (while stopping: ${requested})` : '';
  if (check.known === false)
    return { hostLost: true, reason: `browser host ${hostId} lost: it was restarted, and the browser died with it${why}` };
  // Only hosts that bound their browsers say `ended`, so older histories replay as they ran.
  if (check.ended === 'out_of_memory') return { hostLost: false, reason: `${BROWSER_OUT_OF_MEMORY}${why}` };
  return { hostLost: false, reason: `${BROWSER_CRASHED}${why}` };
}

/** The stop reason of a browser whose host stopped answering: the resource settles `failed` with it. */
function hostLostReason(hostId: string, error: unknown) {
  const why = isPickupTimeout(error) ? `it picked up no task within ${HOST_PICKUP_TIMEOUT}` : failureMessage(error);
  return `browser host ${hostId} lost: ${why}`;
}

/** The host's queue had no worker to take the task in time: the host is gone. */
function isPickupTimeout(error: unknown): boolean {
  if (error instanceof ActivityFailure) return isPickupTimeout(error.cause);
  return error instanceof TimeoutFailure && error.timeoutType === 'SCHEDULE_TO_START';
}

function validStopReason(reason: unknown) {
  if (typeof reason !== 'string' || reason.trim() === '') throw new Error('stop needs a reason (a non-empty string)');
}

function failureMessage(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause) return failureMessage(error.cause);
  return error instanceof Error ? error.message : String(error);
}
