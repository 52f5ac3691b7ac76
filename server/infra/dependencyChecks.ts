import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client as TemporalClient } from '@temporalio/client';
import type { Config } from '../config.ts';
import { ServiceUnavailable } from '../errors.ts';

type Dependencies = { config: Pick<Config, 'databaseTimeoutMs' | 'temporal'>; orm: MikroORM; temporal: TemporalClient };

/**
 * `GET /api/health`: the database and the workflow engine each asked a trivial question, both at
 * once, each within its bound (DATABASE_TIMEOUT_SECONDS, TEMPORAL_TIMEOUT_SECONDS). A dependency
 * that stopped answering without going away (a stalled disk, a partition, a SIGSTOP) fails the
 * check as surely as one that exited: 503, naming which. A supervisor's exit watch sees only the second.
 */
export async function checkDependencies(deps: Dependencies) {
  const [database, engine] = await Promise.allSettled([
    // The statement bounds of db/orm.ts end this, even with a server that never answers.
    deps.orm.em.fork().getConnection().execute('select 1'),
    deps.temporal.connection.withDeadline(Date.now() + deps.config.temporal.timeoutMs, () =>
      deps.temporal.workflowService.getSystemInfo({}),
    ),
  ]);
  const failing = [
    ...(database.status === 'rejected' ? [`the database (within ${deps.config.databaseTimeoutMs / 1000} s)`] : []),
    ...(engine.status === 'rejected' ? [`the workflow engine (within ${deps.config.temporal.timeoutMs / 1000} s)`] : []),
  ];
  if (failing.length) {
    const cause = database.status === 'rejected' ? database.reason : engine.status === 'rejected' ? engine.reason : undefined;
    throw new ServiceUnavailable(`Not answering: ${failing.join(' and ')}`, cause);
  }
  return { status: 'ok' as const, database: 'ok' as const, engine: 'ok' as const };
}
