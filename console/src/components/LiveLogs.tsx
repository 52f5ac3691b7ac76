import { useEffect, useState } from 'react';

type LogEntry = {
  seq: number;
  severity: string;
  message: string;
  area: string;
  context: string;
  created: string;
  object?: Record<string, unknown> | null;
};

/**
 * A log as it is written: the route's server-sent events (`event: log`, `event: end` when the
 * stream is finished), over the session cookie. EventSource resumes after a dropped connection
 * with Last-Event-ID by itself.
 */
export function LiveLogs({ url, screenshotHref }: { url: string; screenshotHref?: (id: string) => string }) {
  const [entries, setEntries] = useState<LogEntry[]>([]);
  const [state, setState] = useState<'connecting' | 'live' | 'ended' | 'failed'>('connecting');
  useEffect(() => {
    setEntries([]);
    const source = new EventSource(url, { withCredentials: true });
    source.addEventListener('open', () => setState('live'));
    source.addEventListener('log', (event) => {
      const entry = JSON.parse((event as MessageEvent).data) as LogEntry;
      setEntries((seen) => (seen.some((known) => known.seq === entry.seq) ? seen : [...seen, entry]));
    });
    source.addEventListener('end', () => {
      setState('ended');
      source.close();
    });
    source.addEventListener('error', () => {
      if (source.readyState === EventSource.CLOSED) setState('failed');
    });
    return () => source.close();
  }, [url]);
  return (
    <>
      <p className="muted" aria-live="polite">
        {state === 'live' ? 'Live' : state === 'ended' ? 'Complete' : state === 'failed' ? 'The log could not be read' : 'Connecting…'} ·{' '}
        {entries.length} entries
      </p>
      <ol className="logs" aria-label="logs">
        {entries.map((entry) => (
          <li key={entry.seq} className={`severity-${entry.severity}`}>
            <time>{new Date(entry.created).toLocaleTimeString()}</time> <span className="muted">{entry.context}</span>{' '}
            {typeof entry.object?.screenshot === 'string' && screenshotHref ? (
              <a href={screenshotHref(entry.object.screenshot)} target="_blank" rel="noreferrer">
                {entry.message}
              </a>
            ) : (
              entry.message
            )}
          </li>
        ))}
      </ol>
    </>
  );
}
