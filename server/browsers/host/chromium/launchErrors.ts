import { launchFailures } from '../../../../workflows/contracts/browserSession.ts';

/**
 * A launch error's name is its `ApplicationFailure` type, from the workflow's contract: the host
 * activities translate any `LaunchError` into a failure of that type, and the workflow's retry
 * policy lists it.
 */
type LaunchErrorType = (typeof launchFailures)['capacityReached' | 'warmBrowserGone' | 'hostDraining'];

/** Why a browser host could not launch or adopt a browser; `cause` (ErrorOptions) keeps the underlying error. */
export abstract class LaunchError extends Error {
  abstract override readonly name: LaunchErrorType;
  /** Whether the same launch tried again on this host can succeed. */
  abstract readonly retryable: boolean;
}

/** The host already runs its maximum of browsers: a retry here meets the same limit. */
export class CapacityReached extends LaunchError {
  override readonly name = launchFailures.capacityReached;
  readonly retryable = false;
}

/** The warm browser the api claimed is not on this host (it restarted since): it will not come back. */
export class WarmBrowserGone extends LaunchError {
  override readonly name = launchFailures.warmBrowserGone;
  readonly retryable = false;
}

/** The host is draining (asked to stop): it takes no new browser, another host must. */
export class HostDraining extends LaunchError {
  override readonly name = launchFailures.hostDraining;
  readonly retryable = false;
}
