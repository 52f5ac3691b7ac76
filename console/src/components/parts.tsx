import { type QueryKey, type UseQueryOptions, useQuery } from '@tanstack/react-query';
import { type ButtonHTMLAttributes, type ComponentType, type ReactNode, useEffect, useRef, useState } from 'react';
import { issuesOf, messageOf } from '../api.ts';

/** A failed call, as the service put it, with each of its issues by the input it names. */
export function ErrorLine({ error }: { error: unknown }) {
  if (!error) return null;
  const issues = issuesOf(error);
  return (
    <div className="error" role="alert">
      <p>{messageOf(error)}</p>
      {issues.length > 0 && (
        <ul aria-label="issues">
          {issues.map((issue) => (
            <li key={`${issue.path.join('.')}:${issue.message}`}>
              {issue.path.length > 0 && <code>{issue.path.join('.')}</code>} {issue.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/**
 * What a page shows of the query it is made from: "Loading…" until the answer comes, what went
 * wrong if the query failed (a failed refetch too), else `children` of the answer. `page` gives
 * the loading line the page's margins, for what is drawn outside the console's `<main>`.
 */
export function Loaded<T>({
  query,
  page = false,
  children,
}: {
  query: { data: T | undefined; isError: boolean; error: unknown };
  page?: boolean;
  children: (data: T) => ReactNode;
}) {
  if (query.isError) return <ErrorLine error={query.error} />;
  if (query.data === undefined) return <p className={page ? 'muted page' : 'muted'}>Loading…</p>;
  return children(query.data);
}

/** Beside a field: what the failed call said of the input at `path` (e.g. `['args', 'url']`), if anything. */
export function FieldIssue({ error, path }: { error: unknown; path: readonly (string | number)[] }) {
  const said = issuesOf(error).filter((issue) => path.every((part, index) => String(issue.path[index]) === String(part)));
  if (said.length === 0) return null;
  return (
    <span className="error field-issue" role="alert">
      {said.map((issue) => issue.message).join('; ')}
    </span>
  );
}

/** How many rows a list shows at once. */
export const PAGE_SIZE = 20;

/**
 * A list read a page at a time with the API's `limit` and `offset`: one row more than shown is
 * asked for, to know whether a next page exists. The answer is a query for `Loaded` (its `data`
 * the page's rows) with `pager`, the Previous / Next bar (none when everything fits on one page).
 * `optionsOf` gives the list procedure's options for a page (`trpc.x.list.queryOptions({ ...input,
 * ...page })`), so its key without the page refreshes them all.
 */
export function usePagedList<T>(
  optionsOf: (page: { limit: number; offset: number }) => UseQueryOptions<T[], Error, T[], QueryKey>,
  label: string,
) {
  const [offset, setOffset] = useState(0);
  const query = useQuery(optionsOf({ limit: PAGE_SIZE + 1, offset }));
  const more = (query.data?.length ?? 0) > PAGE_SIZE;
  const data = query.data?.slice(0, PAGE_SIZE);
  const pager =
    offset === 0 && !more ? null : (
      <nav className="row pager" aria-label={`${label}: pages`}>
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}>
          Previous
        </button>
        <span className="muted">
          {offset + 1}–{offset + (data?.length ?? 0)}
        </span>
        <button type="button" disabled={!more} onClick={() => setOffset(offset + PAGE_SIZE)}>
          Next
        </button>
      </nav>
    );
  return { data, isError: query.isError, error: query.error, pager };
}

/** A value to paste elsewhere (a URL, a secret, a snippet), with a button that copies it. */
export function Copyable({ label, value, multiline = false }: { label: string; value: string; multiline?: boolean }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(value);
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return (
    <div className="copyable">
      <span className="label">{label}</span>
      {multiline ? <Block label={label}>{value}</Block> : <output aria-label={label}>{value}</output>}
      <button type="button" onClick={copy}>
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}

/** `iso` as this browser's local date and time; a dash for none. */
export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

/**
 * Text shown as it is (JSON, a snippet), in a region that scrolls when it is long: focusable, so the
 * keyboard reaches and scrolls it too (axe: scrollable-region-focusable).
 */
export function Block({ label, children }: { label: string; children: string }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by the keyboard
    <pre role="document" aria-label={label} tabIndex={0}>
      {children}
    </pre>
  );
}

/**
 * A button for what cannot be undone: the first press asks `question`, with the answer `yes`
 * (focused, so Enter confirms) and Cancel beside it. `Button` draws the first button (a
 * WriteButton, so a read-only project turns it off).
 */
export function ConfirmButton({
  children,
  question,
  yes,
  onConfirm,
  disabled,
  Button = 'button',
}: {
  children: string;
  question: string;
  yes: string;
  onConfirm: () => void;
  disabled?: boolean;
  Button?: 'button' | ComponentType<ButtonHTMLAttributes<HTMLButtonElement>>;
}) {
  const [asking, setAsking] = useState(false);
  const confirm = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirm.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <Button type="button" disabled={disabled} onClick={() => setAsking(true)}>
        {children}
      </Button>
    );
  }
  return (
    <fieldset aria-label={question} className="row confirm">
      <span>{question}</span>
      <button
        type="button"
        ref={confirm}
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {yes}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </fieldset>
  );
}

/** A run's state as its badge (`status.pipeline`: queued, running, succeeded, failed, cancelled). */
export function RunStatus({ status }: { status: string }) {
  return <span className={`status ${status}`}>{status}</span>;
}
