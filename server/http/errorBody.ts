import type { FastifyError } from 'fastify';
import type { ErrorIssue } from '../errors.ts';

/** The one error body of the API (ARCHITECTURE.md): `{status: "error", code, message, issues?}`. */
export type ErrorBody = { status: 'error'; code: string; message: string; issues?: ErrorIssue[] };

export function errorBody(code: string, message: string, issues?: ErrorIssue[]): ErrorBody {
  return issues?.length ? { status: 'error', code, message, issues } : { status: 'error', code, message };
}

/** "Invalid input: name: expected string; Unrecognized key: "foo"" — every problem, named. */
export function describeIssues(issues: ErrorIssue[]) {
  const parts = issues.map((issue) => (issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message));
  return `Invalid input: ${parts.join('; ')}`;
}

type TrpcRestError = {
  message?: string;
  code?: string;
  issues?: { path: (string | number)[]; message: string; code?: string }[];
  data?: { domainCode?: string; issues?: ErrorIssue[] };
};

/**
 * trpc-to-openapi writes `{...shape, message, code: <TRPC code>, issues}`; this rewrites it into
 * the API's error body, keeping the domain code the error formatter put in `data`.
 */
export function reshapeRestError(raw: TrpcRestError): ErrorBody {
  const issues = raw.data?.issues ?? raw.issues?.map(({ path, message, code }) => ({ path, message, code }));
  const code = raw.data?.domainCode ?? (raw.issues ? 'invalid_input' : (raw.code ?? 'error').toLowerCase());
  const message = code === 'invalid_input' && issues?.length ? describeIssues(issues) : (raw.message ?? 'Error');
  return errorBody(code, message, issues);
}

/** Fastify's own errors (bad JSON, body too large, 415 …) in the API's shape. */
export function fastifyErrorBody(error: FastifyError): { status: number; body: ErrorBody } {
  const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  if (status === 500) return { status, body: errorBody('internal_error', 'Internal server error') };
  const codes: Record<string, string> = {
    FST_ERR_CTP_BODY_TOO_LARGE: 'body_too_large',
    FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
    FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_content_length',
    FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  };
  const code =
    codes[error.code] ?? (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ? 'invalid_json' : 'bad_request');
  const message = code === 'invalid_json' ? `The body is not valid JSON: ${error.message}` : error.message;
  return { status, body: errorBody(code, message) };
}
