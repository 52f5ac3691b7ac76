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
    <label>
      Session
      <select value={session} onChange={(event) => setSession(event.target.value)}>
        {sessions.data?.map((item) => (
          <option key={item.id} value={item.id}>
            {item.name}
          </option>
        ))}
      </select>
    </label>
  );
  return { session, picker };
}
