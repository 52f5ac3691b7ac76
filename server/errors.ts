import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import type { FastifyError } from 'fastify';
import { ZodError } from 'zod';
import { isDatabaseUnavailable } from './infra/databaseErrors.ts';

/**
 * The errors module: the domain errors, and how each edge answers them. Code inside the service
 * throws the domain classes; the edges translate them with the functions at the end of this file
 * (REST and raw routes: `httpAnswer`; tRPC: `domainTRPCError` and the error formatter in
 * server/trpc/base.ts; the REST adapter's answers: `restErrorBody`; MCP: the error body in a tool result). Temporal failures are translated in
 * the activities, by the error types their workflow contracts name.
 */

/**
 * Every `code` the API's error body can carry, by HTTP status: the domain errors below take theirs
 * from here (the compiler holds them to it), and the OpenAPI document's enums are these lists. The
 * lower-case tRPC names are what an error without a domain code becomes (the REST adapter's own).
 */
export const errorCodes = {
  400: [
    'already_subscribed',
    'already_verified',
    'analysis_rejected',
    'analysis_running',
    'analysis_without_output',
    'bad_request',
    'bad_url',
    'billing_disabled',
    'currency_not_accepted',
    'currency_switch',
    'downgrade',
    'email_not_verified',
    'event_stream_required',
    'external_flow_mismatch',
    'external_login_denied',
    'external_login_failed',
    'function_failed',
    'generation_accepted',
    'generation_does_not_compile',
    'generation_rejected',
    'generation_running',
    'generation_unverified',
    'generation_without_output',
    'invalid_amount',
    'invalid_api_key',
    'invalid_args',
    'invalid_code',
    'invalid_content_length',
    'invalid_input',
    'invalid_json',
    'invalid_launch_args',
    'invalid_mcp_server',
    'invalid_password',
    'invalid_return_url',
    'invalid_signature',
    'invalid_state',
    'invalid_token',
    'last_sign_in_method',
    'mcp_session_required',
    'model_not_allowed',
    'no_external_sign_in',
    'no_session',
    'no_setup',
    'parse_error',
    'session_gone',
    'too_deep',
    'two_factor_disabled',
    'two_factor_enabled',
    'unknown_function',
    'unknown_image',
    'unknown_price',
    'unknown_project',
    'unknown_proxy',
    'user_not_found',
    'version_has_errors',
    'websocket_required',
  ],
  401: [
    'api_key_required',
    'invalid_api_key',
    'invalid_code',
    'invalid_credentials',
    'invalid_token',
    'no_2fa_pending',
    'session_ended',
    'unauthenticated',
    'unauthorized',
  ],
  402: ['insufficient_funds', 'payment_required'],
  403: ['api_key_not_linked', 'cross_site_request', 'forbidden', 'host_not_allowed'],
  404: ['billing_disabled', 'browser_not_running', 'not_found', 'session_not_found', 'unknown_provider', 'unknown_tool'],
  405: ['method_not_allowed'],
  408: ['request_timeout'],
  409: [
    'browser_not_running',
    'browser_starting',
    'conflict',
    'email_taken',
    'function_cancelled',
    'function_running',
    'identity_linked_elsewhere',
    'name_taken',
    'pipeline_running',
    'project_limit_reached',
    'profile_in_use',
    'provider_already_linked',
    'session_running',
    'slug_taken',
    'too_many_cookies',
    'webhook_endpoint_limit_reached',
  ],
  413: ['body_too_large', 'payload_too_large'],
  414: ['uri_too_long'],
  415: ['unsupported_media_type'],
  431: ['headers_too_large'],
  429: [
    'account_browser_limit_reached',
    'browser_hosts_full',
    'browser_limit_reached',
    'call_queue_full',
    'call_queue_timeout',
    'rate_limited',
    'too_many_requests',
  ],
  500: ['internal_error', 'internal_server_error', 'payment_provider_error'],
  503: ['browser_start_failed', 'function_timeout', 'host_lost', 'host_shutdown', 'service_unavailable'],
} as const;

export type ErrorStatus = keyof typeof errorCodes;
/** The codes of one status (`ErrorCode<400>`), or of any. */
export type ErrorCode<Status extends ErrorStatus = ErrorStatus> = (typeof errorCodes)[Status][number];

export type ErrorIssue = { path: (string | number)[]; message: string; code?: string };

type DomainErrorOptions = { cause?: unknown; retryable?: boolean; issues?: ErrorIssue[] };

export abstract class DomainError extends Error {
  abstract readonly status: number;
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly issues?: ErrorIssue[];

  constructor(code: ErrorCode, message: string, options: DomainErrorOptions = {}) {
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
  constructor(code: ErrorCode<400>, message: string, options?: DomainErrorOptions) {
    super(code, message, options);
  }
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
  constructor(message = 'Authentication required', code: ErrorCode<401> = 'unauthenticated') {
    super(code, message);
  }
}

/** 402: the account has no funds left (billing is on, balance and plan pools are spent). */
export class PaymentRequired extends DomainError {
  override name = 'PaymentRequired';
  readonly status = 402;
  constructor(message = 'The account has no funds left: top up or subscribe to a plan (GET /api/billing/overview)') {
    super('insufficient_funds', message);
  }
}

/** 403: authenticated, but this subject may not do this. */
export class PermissionDenied extends DomainError {
  override name = 'PermissionDenied';
  readonly status = 403;
  constructor(message = 'You do not have permission to do this', code: ErrorCode<403> = 'forbidden') {
    super(code, message);
  }
}

/** 404: missing, or not visible to the caller (the two are indistinguishable on purpose). */
export class NotFound extends DomainError {
  override name = 'NotFound';
  readonly status = 404;
  /** `hint` follows the message after a colon: why the caller may not see it. */
  constructor(what: string, code: ErrorCode<404> = 'not_found', hint?: string) {
    super(code, hint ? `${what} not found: ${hint}` : `${what} not found`);
  }
}

/**
 * The 404 of a project the caller cannot see. A caller who sent no credentials hears that too,
 * since that is the likely reason; the answer is the same whether the project exists or not.
 */
export function projectNotFound(subject: { kind: string }) {
  const hint =
    subject.kind === 'anonymous' ? 'no credentials were sent (an API key in X-API-Key, or Authorization: Bearer <token>)' : undefined;
  return new NotFound('Project', 'not_found', hint);
}

/** 409: a unique name or slug is taken. */
export class Conflict extends DomainError {
  override name = 'Conflict';
  readonly status = 409;
  constructor(code: ErrorCode<409>, message: string, options?: DomainErrorOptions) {
    super(code, message, options);
  }
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

/** 503: a dependency (the database, Temporal, the mail server) is out of reach; the request may be retried. */
export class ServiceUnavailable extends DomainError {
  override name = 'ServiceUnavailable';
  readonly status = 503;
  /** What the Retry-After header says. */
  readonly retryAfterSeconds = 5;
  constructor(message: string, cause?: unknown) {
    super('service_unavailable', message, { cause, retryable: true });
  }
}

/**
 * 429: a concurrency limit (browsers per project, per account or per host) is reached; retry after
 * stopping one. A quota on what is kept until deleted (projects, webhook endpoints) is a 409
 * `Conflict` instead: waiting does not lift it (docs/quotas.md).
 */
export class LimitReached extends DomainError {
  override name = 'LimitReached';
  readonly status = 429;
  constructor(code: ErrorCode<429>, message: string, options?: DomainErrorOptions) {
    super(code, message, options);
  }
}

// ---- At the edges ------------------------------------------------------------------------------
// Code inside the service throws the classes above; these turn an error into what each edge
// answers: the API's error body (REST, raw routes, MCP), a tRPC error, the REST adapter's error body.

/**
 * The domain error an error stands for, if any. A unique violation is a race lost to another
 * request (two creates of one slug, two links of one identity): a 409, wherever it surfaces.
 */
export function asDomainError(error: unknown): DomainError | undefined {
  if (error instanceof DomainError) return error;
  if (error instanceof UniqueConstraintViolationException) {
    return new Conflict('conflict', 'A record with the same unique name or slug exists', { cause: error });
  }
  if (isDatabaseUnavailable(error))
    return new ServiceUnavailable('The database is out of reach or did not answer in time; try again shortly', error);
  return undefined;
}

/** The one error body of the API (ARCHITECTURE.md): `{status: "error", code, message, issues?}`. */
export type ErrorBody = { status: 'error'; code: ErrorCode; message: string; issues?: ErrorIssue[] };

export function errorBody(code: ErrorCode, message: string, issues?: ErrorIssue[]): ErrorBody {
  return issues?.length ? { status: 'error', code, message, issues } : { status: 'error', code, message };
}

/** "Invalid input: name: expected string; Unrecognized key: "foo"" — every problem, named. */
export function describeIssues(issues: ErrorIssue[]) {
  const parts = issues.map((issue) => (issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message));
  return `Invalid input: ${parts.join('; ')}`;
}

type ZodIssue = ZodError['issues'][number];

/** Unknown keys come as one issue at the object; split them so each names its field in `path`. */
export function describeZodIssues(issues: ZodIssue[]) {
  return issues.flatMap((issue): { path: PropertyKey[]; message: string; code: string }[] =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: [...issue.path, key], message: 'not a known field', code: issue.code }))
      : [{ path: issue.path, message: plainWords(issue), code: issue.code }],
  );
}

const kinds: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  bigint: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  date: 'a date',
  null: 'null',
};

const formats: Record<string, string> = {
  email: 'an e-mail address',
  uuid: 'a UUID',
  guid: 'a UUID',
  url: 'a URL',
  datetime: 'a date and time (ISO 8601)',
  date: 'a date (YYYY-MM-DD)',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
};

/**
 * Zod's default messages ("Invalid input: expected string, received undefined") in plain words
 * ("required", "must be text"). A message a schema wrote itself is kept as written; values the
 * caller sent are never quoted, only what the schema allows.
 */
function plainWords(issue: ZodIssue): string {
  const { message } = issue;
  switch (issue.code) {
    case 'invalid_type':
      if (!message.startsWith('Invalid input: expected')) return message;
      if (message.endsWith('received undefined')) return 'required';
      return `must be ${kinds[issue.expected] ?? issue.expected}`;
    case 'invalid_value':
      if (!/^Invalid (option|input): expected/.test(message)) return message;
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])}`
        : `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
    case 'too_small':
    case 'too_big': {
      if (!/^Too (small|big): expected/.test(message)) return message;
      const limit = Number(issue.code === 'too_small' ? issue.minimum : issue.maximum);
      const side = issue.code === 'too_small' ? (issue.inclusive ? 'at least' : 'more than') : issue.inclusive ? 'at most' : 'less than';
      if (issue.origin === 'string')
        return issue.code === 'too_small' && limit === 1 ? 'must not be empty' : `must be ${side} ${limit} characters long`;
      if (issue.origin === 'array' || issue.origin === 'set') return `must have ${side} ${limit} ${limit === 1 ? 'item' : 'items'}`;
      return `must be ${side} ${limit}`;
    }
    case 'invalid_format':
      if (!/^Invalid /.test(message)) return message;
      if (issue.format === 'regex') return 'is not in the expected format';
      return `must be ${formats[issue.format] ?? `in the ${issue.format} format`}`;
    default:
      return message;
  }
}

/** A body a raw route's schema refused, as the 400 the procedures answer for the same. */
export function invalidInput(error: ZodError) {
  const issues = describeZodIssues(error.issues).map(({ path, message, code }) => ({ path: path.map(String), message, code }));
  return new BadRequest('invalid_input', describeIssues(issues), { issues });
}

const trpcCodes: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  402: 'PAYMENT_REQUIRED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  503: 'SERVICE_UNAVAILABLE',
};

/** The tRPC error a domain error becomes (the error formatter reads the domain code back from its cause). */
export function toTRPCError(error: DomainError) {
  return new TRPCError({ code: trpcCodes[error.status] ?? 'INTERNAL_SERVER_ERROR', message: error.message, cause: error });
}

/**
 * The tRPC error of anything thrown that stands for a domain error (`asDomainError`), else
 * undefined: the one translation of the tRPC edge, for errors out of procedures and out of
 * building their context alike.
 */
export function domainTRPCError(error: unknown): TRPCError | undefined {
  const domain = asDomainError(error);
  return domain ? toTRPCError(domain) : undefined;
}

/** The domain code and issues a tRPC error carries: its domain error's, or its input's (zod). */
function detailsOf(error: TRPCError) {
  const domain = error.cause instanceof DomainError ? error.cause : undefined;
  // The input's own schema refused it; a ZodError behind a 500 is an answer that failed its output
  // schema: the service's fault, its details internal.
  const zod = error.cause instanceof ZodError && error.code === 'BAD_REQUEST' ? error.cause : undefined;
  return {
    domain,
    domainCode: domain?.code ?? (zod ? ('invalid_input' as const) : undefined),
    issues: domain?.issues ?? (zod ? describeZodIssues(zod.issues) : undefined),
  };
}

/** A domain error's message is written to be shown (a 500 one too, e.g. the payment provider's failure); no other 500's is. */
function shownMessage(error: TRPCError, message: string, domain: DomainError | undefined) {
  return error.code === 'INTERNAL_SERVER_ERROR' && !domain ? 'Internal server error' : message;
}

/**
 * The shape of every tRPC error: internals never named, the domain code and issues carried in
 * `data` (the SDK's `data.domainCode` reads them there; `restErrorBody` reads the same details).
 */
export function formatTRPCError<Shape extends { message: string; data: { code: string; httpStatus: number; path?: string } }>({
  shape,
  error,
}: {
  shape: Shape;
  error: TRPCError;
}) {
  const { domain, domainCode, issues } = detailsOf(error);
  return {
    ...shape,
    message: shownMessage(error, shape.message, domain),
    data: { code: shape.data.code, httpStatus: shape.data.httpStatus, path: shape.data.path, domainCode, issues },
  };
}

/**
 * The API's error body for a tRPC error the REST routes answer (server/http/restRoutes.ts), read
 * from the error itself (the same details the error formatter puts in `data`). An error without a domain
 * code (the adapter's own: no route, a wrong media type) keeps its tRPC code, lowercased.
 */
export function restErrorBody(error: TRPCError): ErrorBody {
  const { domain, domainCode, issues } = detailsOf(error);
  // Input paths are keys of parsed JSON: never symbols.
  const named = issues as ErrorIssue[] | undefined;
  const code = domainCode ?? asErrorCode(error.code.toLowerCase());
  const message = code === 'invalid_input' && named?.length ? describeIssues(named) : shownMessage(error, error.message, domain);
  return errorBody(code, message, named);
}

const knownCodes = new Set<string>(Object.values(errorCodes).flat());

/** A code from outside the catalogue (the REST adapter's own tRPC codes) as one of it. */
function asErrorCode(code: string): ErrorCode {
  return knownCodes.has(code) ? (code as ErrorCode) : 'bad_request';
}

const fastifyCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'body_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_content_length',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
};

/** Fastify's own errors (bad JSON, body too large, 415 …) in the API's shape. */
export function fastifyErrorBody(error: FastifyError): { status: number; body: ErrorBody } {
  const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  if (status === 500) return { status, body: errorBody('internal_error', 'Internal server error') };
  const code =
    fastifyCodes[error.code] ??
    (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ? 'invalid_json' : 'bad_request');
  const message = code === 'invalid_json' ? `The body is not valid JSON: ${error.message}` : error.message;
  return { status, body: errorBody(code, message) };
}

/**
 * What an HTTP route answers for any error it throws: a domain error as itself, Fastify's own in
 * the API's shape, anything else a 500 that names no internals. `domain` says which it was.
 */
export function httpAnswer(error: unknown): { status: number; body: ErrorBody; domain?: DomainError } {
  const domain = asDomainError(error);
  if (domain) return { status: domain.status, body: errorBody(domain.code, domain.message, domain.issues), domain };
  return fastifyErrorBody(error as FastifyError);
}
