import { useState } from 'react';
import { messageOf } from './api.ts';

/** A failed call, as the service put it. */
export function ErrorLine({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {messageOf(error)}
    </p>
  );
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
      {multiline ? (
        <pre role="document" aria-label={label}>
          {value}
        </pre>
      ) : (
        <output aria-label={label}>{value}</output>
      )}
      <button type="button" onClick={copy}>
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}

/** `iso` as this browser's local date and time; a dash for none. */
export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');
