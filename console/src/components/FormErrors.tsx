import { Alert } from '@mantine/core';
import { IconAlertCircle } from '@tabler/icons-react';
import { issuesOf } from '../api.ts';

/**
 * A failed call in a form's words: each of the API's `issues` (server/errors.ts: `{path, message}`)
 * beside the field its path names, and what names no field of the form above it, as the
 * service's message. Never the error body itself: no JSON, no codes.
 */

const samePath = (issuePath: readonly (string | number)[], path: readonly (string | number)[]) =>
  path.length <= issuePath.length && path.every((part, index) => String(issuePath[index]) === String(part));

/** What the failed call said of the field at `path` (and below it), for a Mantine input's `error`. */
export function fieldError(error: unknown, path: readonly (string | number)[]): string | undefined {
  const said = issuesOf(error).filter((issue) => samePath(issue.path, path));
  return said.length ? said.map((issue) => issue.message).join('; ') : undefined;
}

/**
 * The part of a failed call that no field of the form shows: its issues at other paths, or (with
 * none shown beside a field) the service's message.
 */
export function FormError({ error, fields, title = 'That did not work' }: { error: unknown; fields: readonly string[]; title?: string }) {
  if (!error) return null;
  const issues = issuesOf(error);
  const elsewhere = issues.filter((issue) => !fields.some((field) => samePath(issue.path, [field])));
  const shownBeside = issues.length > elsewhere.length;
  let text: string;
  if (elsewhere.length) {
    text = elsewhere.map((issue) => (issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message)).join('; ');
  } else if (shownBeside) {
    return null;
  } else {
    text = error instanceof Error ? error.message : String(error);
  }
  return (
    <Alert role="alert" color="red" variant="light" icon={<IconAlertCircle size={18} />} title={title}>
      {text}
    </Alert>
  );
}
