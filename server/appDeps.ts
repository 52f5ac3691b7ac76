import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client as TemporalClient } from '@temporalio/client';
import type { Logger } from 'pino';
import type { AccessCache } from './auth/accessCache.ts';
import type { JwtSigner } from './auth/jwt.ts';
import type { RelayTokens } from './browsers/tokens/relayTokens.ts';
import type { ResourceTokens } from './browsers/tokens/resourceTokens.ts';
import type { Config } from './config.ts';

/** What the api process is built from; the app factory receives it, nothing here is global. */
export type AppDeps = {
  config: Config;
  orm: MikroORM;
  jwt: JwtSigner;
  /** JWT_SECRET (or the generated one of `npm start`), resolved once: the root of the sealing keys. */
  serviceSecret: string;
  /** Signs the tokens inside remoteUrl and vncUrl. */
  resourceTokens: ResourceTokens;
  /**
   * Mints the token of each connection the api opens to a browser host's relay (BROWSER_RELAY_SECRET,
   * or derived from `serviceSecret`). Made by buildApp.
   */
  relayTokens: RelayTokens;
  temporal: TemporalClient;
  /**
   * `temporal` is a client on the control worker's own connection, in this process (`npm start`):
   * workflow starts then ask for eager execution, so the first workflow task goes straight to that
   * worker instead of through the server's task queue. False when the api runs on its own.
   */
  eagerStart?: boolean;
  log: Logger;
  /**
   * API keys, sessions and projects kept between requests, in step with the database
   * (server/auth/accessCache.ts). Made by buildApp, which owns its LISTEN connection.
   */
  access: AccessCache;
  /** Hooks run after a project is created (the browser-sessions work provisions "Default session"). */
  onProjectCreated?: ((projectId: string, deps: AppDeps) => Promise<void>)[];
};
