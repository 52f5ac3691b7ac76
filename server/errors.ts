/**
 * Domain errors. Code inside the service throws these; the edges translate them
 * (HTTP and tRPC in server/http/errorBody.ts, Temporal in activities, MCP later).
 */

export type ErrorIssue = { path: (string | number)[]; message: string; code?: string };

type DomainErrorOptions = { cause?: unknown; retryable?: boolean; issues?: ErrorIssue[] };

export abstract class DomainError extends Error {
  abstract readonly status: number;
  readonly code: string;
  readonly retryable: boolean;
  readonly issues?: ErrorIssue[];

  constructor(code: string, message: string, options: DomainErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.issues = options.issues;
  }
}

/** 400: the input is wrong, or a rule of the domain forbids the request as made. */
export class BadRequest extends DomainError {
  override name = 'BadRequest';
  readonly status = 400;
}

/** 400 by the spec (5.4): the endpoint needs a verified e-mail address. */
export class EmailNotVerified extends DomainError {
  override name = 'EmailNotVerified';
  readonly status = 400;
  constructor(message = 'A verified e-mail address is required for this action') {
    super('email_not_verified', message);
  }
}

/** 401: no credentials, or credentials that are not (or no longer) valid. */
export class Unauthenticated extends DomainError {
  override name = 'Unauthenticated';
  readonly status = 401;
  constructor(message = 'Authentication required', code = 'unauthenticated') {
    super(code, message);
  }
}

/** 403: authenticated, but this subject may not do this. */
export class PermissionDenied extends DomainError {
  override name = 'PermissionDenied';
  readonly status = 403;
  constructor(message = 'You do not have permission to do this', code = 'forbidden') {
    super(code, message);
  }
}

/** 404: missing, or not visible to the caller (the two are indistinguishable on purpose). */
export class NotFound extends DomainError {
  override name = 'NotFound';
  readonly status = 404;
  constructor(what: string, code = 'not_found') {
    super(code, `${what} not found`);
  }
}

/** 409: a unique name or slug is taken. */
export class Conflict extends DomainError {
  override name = 'Conflict';
  readonly status = 409;
}

/** 429: too many requests; `retryAfterSeconds` goes to the Retry-After header. */
export class RateLimited extends DomainError {
  override name = 'RateLimited';
  readonly status = 429;
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super('rate_limited', `Too many requests; retry in ${retryAfterSeconds} s`, { retryable: true });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** 503: a dependency (Temporal, the mail server) is out of reach; the request may be retried. */
export class ServiceUnavailable extends DomainError {
  override name = 'ServiceUnavailable';
  readonly status = 503;
  constructor(message: string, cause?: unknown) {
    super('service_unavailable', message, { cause, retryable: true });
  }
}

/** 429: a concurrency limit (browsers per project or per host) is reached; retry after stopping one. */
export class LimitReached extends DomainError {
  override name = 'LimitReached';
  readonly status = 429;
}
