import {
  type BrowserflowError,
  createBrowserflowClient,
  isBrowserflowError,
  type RouterInputs,
  type RouterOutputs,
} from '../../client/index.ts';

/**
 * The typed client over this origin's tRPC endpoint. The console signs in with the service's
 * session cookie (SameSite=Lax, HttpOnly): no token is kept in the page's storage.
 */
export const bf = createBrowserflowClient({ url: window.location.origin });

export type { RouterInputs, RouterOutputs };
export type Session = RouterOutputs['sessions']['list'][number];
export type Resource = RouterOutputs['resources']['get'];

/** The inputs a failed call names, as the API's `issues` give them. */
export function issuesOf(error: unknown): { path: (string | number)[]; message: string }[] {
  if (!isBrowserflowError(error)) return [];
  const issues = ((error as BrowserflowError).data as { issues?: unknown } | undefined)?.issues;
  return Array.isArray(issues) ? issues.filter((issue) => issue && typeof issue.message === 'string' && Array.isArray(issue.path)) : [];
}

/**
 * What a failed call says to a person: the service's own message, with its code. A message that is
 * data (tRPC's own for an input it refused is its zod issues as JSON) is said in words instead:
 * the issues themselves are shown beside their fields.
 */
export function messageOf(error: unknown) {
  if (isBrowserflowError(error)) {
    const code = (error as BrowserflowError).data?.domainCode;
    const raw = /^\s*[[{]/.test(error.message);
    const message = raw
      ? issuesOf(error).length
        ? 'Some of what was entered was refused: see the fields marked.'
        : 'The service refused the request.'
      : error.message;
    return code ? `${message} (${code})` : message;
  }
  return error instanceof Error ? error.message : String(error);
}
