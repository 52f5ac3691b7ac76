/**
 * The `ApplicationFailure` types of launch errors. The host activities translate any
 * `LaunchError` into a failure of its name, so the workflow's retry policies can list these
 * without importing the host.
 */
export const launchErrorTypes = {
  capacityReached: 'CapacityReached',
  warmBrowserGone: 'WarmBrowserGone',
} as const;

export type LaunchErrorType = (typeof launchErrorTypes)[keyof typeof launchErrorTypes];

/** Why a browser host could not launch or adopt a browser; `cause` (ErrorOptions) keeps the underlying error. */
export abstract class LaunchError extends Error {
  abstract override readonly name: LaunchErrorType;
  /** Whether the same launch tried again on this host can succeed. */
  abstract readonly retryable: boolean;
}

/** The host already runs its maximum of browsers: a retry here meets the same limit. */
export class CapacityReached extends LaunchError {
  override readonly name = launchErrorTypes.capacityReached;
  readonly retryable = false;
}

/** The warm browser the api claimed is not on this host (it restarted since): it will not come back. */
export class WarmBrowserGone extends LaunchError {
  override readonly name = launchErrorTypes.warmBrowserGone;
  readonly retryable = false;
}
