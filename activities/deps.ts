import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Config } from '../server/config.ts';

/**
 * What activities are built over. `serviceSecret` (which seals run secrets and proxy passwords) is
 * derived from the config once per process, by the worker that builds them.
 */
export type ActivityDeps = { config: Config; orm: MikroORM; log: Logger; serviceSecret: string };
