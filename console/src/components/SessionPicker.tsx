import { NativeSelect } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { trpc } from '../trpc.ts';

/** The project's session a run or an analysis uses: the first one until another is chosen. */
export function useSessionChoice(slug: string) {
  const sessions = useQuery(trpc.sessions.list.queryOptions({ project: slug, limit: 100 }));
  const [session, setSession] = useState('');
  useEffect(() => {
    if (!session && sessions.data?.[0]) setSession(sessions.data[0].id);
  }, [session, sessions.data]);
  const picker = (
    <NativeSelect
      label="Session"
      value={session}
      onChange={(event) => setSession(event.currentTarget.value)}
      data={(sessions.data ?? []).map((item) => ({ value: item.id, label: item.name }))}
      description={sessions.data?.length === 0 ? 'No sessions yet: create one on the Sessions page first.' : undefined}
    />
  );
  return { session, picker };
}
