/**
 * Errors of node implementations. The activity that runs a node turns them into Temporal
 * failures: `name` as the failure type, `retryable: false` as non-retryable. Messages are the
 * service's own (a selector, a URL, a status), never an input value, so a secret cannot leak
 * through them; `cause` keeps Playwright's error for the host's log.
 */
export const nodeErrorCodes = [
  'invalid_input',
  'not_found',
  'timeout',
  'navigation_failed',
  'script_error',
  'no_page',
  /** The run's Chromium exited under the node (killed or crashed): no retry mends it. */
  'browser_crashed',
  /** A page's renderer process died under the node, the browser lives on: the page is unusable. */
  'renderer_crashed',
  'browser_error',
  /** `page.download`: the download was cancelled (DOWNLOAD_MAX_BYTES), failed, or never came. */
  'download_failed',
  'output_too_large',
  'unknown_type',
] as const;
export type NodeErrorCode = (typeof nodeErrorCodes)[number];

export class NodeError extends Error {
  override name = 'NodeError';
  readonly code: NodeErrorCode;
  readonly retryable: boolean;

  constructor(code: NodeErrorCode, message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(message, { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? code !== 'invalid_input';
  }
}

/** An input that cannot work, whatever the attempt: never worth a retry. */
export class NodeInputError extends NodeError {
  override name = 'NodeInputError';

  constructor(message: string) {
    super('invalid_input', message, { retryable: false });
  }
}
