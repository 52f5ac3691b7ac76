import { useQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState } from 'react';
import Player from 'rrweb-player';
import 'rrweb-player/dist/style.css';
import { trpc } from '../trpc.ts';
import { ErrorLine, Loaded } from './parts.tsx';

/** A point on the recording's timeline: a run's step (its node's start), with its name. */
export type Mark = { at: string; label: string };

type RecordedEvent = { type: number; timestamp: number; data?: unknown };

/** rrweb's custom event (type 5): rrweb-player shows each as a mark on its timeline, titled with its tag. */
const CUSTOM_EVENT = 5;

/**
 * `events` with `marks` placed among them as custom events. A mark outside the recording is put at
 * its nearer end: a step that opened the page starts before the page's first event, and a page
 * left alone (a wait) records nothing, so its last event may come before the last steps.
 */
function withMarks(events: RecordedEvent[], marks: readonly Mark[]) {
  const first = events[0]?.timestamp ?? 0;
  const last = events.at(-1)?.timestamp ?? 0;
  const placed = marks.map((mark) => ({
    type: CUSTOM_EVENT,
    timestamp: Math.min(last, Math.max(first, Date.parse(mark.at))),
    data: { tag: `step ${mark.label}`, payload: {} },
  }));
  return [...events, ...placed].sort((a, b) => a.timestamp - b.timestamp);
}

type LogLine = { area: string; context: string; message: string; created: string };

/** A run's steps as marks: each node's start, from the run's log (`<type> started`). */
function useStepMarks(runLogs: string | undefined) {
  const logs = useQuery({
    queryKey: ['run-log-for-marks', runLogs],
    enabled: runLogs !== undefined,
    queryFn: async () => {
      const answer = await fetch(`${runLogs}?limit=200`, { headers: { accept: 'application/json' } });
      return answer.ok ? ((await answer.json()) as LogLine[]) : [];
    },
  });
  return useMemo(
    () =>
      (logs.data ?? [])
        .filter((line) => line.area === 'node' && line.message.endsWith(' started'))
        .map((line) => ({ at: line.created, label: line.context })),
    [logs.data],
  );
}

/**
 * A browser's recordings (docs/browsers.md, Recordings), replayed with rrweb's player: one recorded
 * page (tab) at a time, with a run's steps (from `runLogs`, the run's log) as marks on its timeline.
 */
export function Recording({
  slug,
  sessionId,
  resourceId,
  runLogs,
}: {
  slug: string;
  sessionId: string;
  resourceId: string;
  runLogs?: string;
}) {
  const ids = { project: slug, sessionId, resourceId };
  const list = useQuery(trpc.resources.recordings.queryOptions(ids));
  const marks = useStepMarks(runLogs);
  const [page, setPage] = useState<number | undefined>(undefined);
  return (
    <Loaded query={list}>
      {(recordings) => {
        if (recordings.pages.length === 0) return <p className="muted">Nothing recorded (yet).</p>;
        // The page with the most events by default: a run's own tab rather than a blank one.
        const chosen =
          page ?? recordings.pages.reduce((best, entry) => (entry.events > best.events ? entry : best), recordings.pages[0]!).page;
        return (
          <>
            {recordings.stopped && <p className="muted">{recordings.stopped}</p>}
            {recordings.pages.length > 1 && (
              <label>
                Page{' '}
                <select value={chosen} onChange={(event) => setPage(Number(event.target.value))}>
                  {recordings.pages.map((entry) => (
                    <option key={entry.page} value={entry.page}>
                      {entry.page + 1}: {entry.url}
                    </option>
                  ))}
                </select>
              </label>
            )}
            <RecordedPage ids={ids} page={chosen} marks={marks} />
          </>
        );
      }}
    </Loaded>
  );
}

function RecordedPage({
  ids,
  page,
  marks,
}: {
  ids: { project: string; sessionId: string; resourceId: string };
  page: number;
  marks: readonly Mark[];
}) {
  const recorded = useQuery(trpc.resources.recording.queryOptions({ ...ids, page }));
  const target = useRef<HTMLElement>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const events = recorded.data?.events as RecordedEvent[] | undefined;
  useEffect(() => {
    const element = target.current;
    if (!element || !events || events.length < 2) return;
    let player: Player | undefined;
    try {
      const width = Math.min(element.clientWidth || 800, 1024);
      player = new Player({
        target: element,
        props: { events: withMarks(events, marks) as never, width, height: Math.round((width * 9) / 16), autoPlay: false },
      });
    } catch (error) {
      setFailure(error);
    }
    return () => {
      (player as unknown as { $destroy?: () => void } | undefined)?.$destroy?.();
      element.replaceChildren();
    };
  }, [events, marks]);
  if (recorded.isError) return <ErrorLine error={recorded.error} />;
  if (!recorded.data) return <p className="muted">Loading the recording…</p>;
  return (
    <>
      <p className="muted">
        {recorded.data.url} · {recorded.data.eventCount} events
      </p>
      {events && events.length < 2 && <p className="muted">Too little recorded to replay.</p>}
      <ErrorLine error={failure} />
      <section className="recording" ref={target} aria-label={`recording of page ${page + 1}`} />
    </>
  );
}
