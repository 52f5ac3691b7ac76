import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created } from './common.ts';

/** A host's warm pool, as it reports it on every heartbeat. */
export type WarmPoolStatus = {
  /** BROWSER_WARM_POOL: browsers of the default settings kept warm whatever the demand. */
  floor: number;
  /** BROWSER_WARM_POOL_MAX (never below the floor). */
  max: number;
  /** Browsers of the default settings the pool keeps warm now, from the recent rate of starts. */
  target: number;
  /** Warm browsers waiting now (of every settings kept warm). */
  size: number;
  /** Warm browsers being launched. */
  launching: number;
  /** Starts of the default settings per minute, over the demand window. */
  startsPerMinute: number;
  /** The running average of a warm launch here (ms). */
  launchMs: number;
  /** Starts that could take a warm browser (no proxy, not external), and how many did. */
  claims: {
    recent: { claims: number; warm: number; windowSeconds: number };
    sinceStart: { claims: number; warm: number; since: string };
  };
};

/**
 * The registry of browser hosts: each host process upserts its row on start and on every heartbeat
 * (5 s). Placement (`reserveBrowserStart`, server/browsers/sessions/browserSessions.ts) takes a host whose
 * heartbeat is fresh and that is not draining.
 */
export const BrowserHost = defineEntity({
  name: 'BrowserHost',
  tableName: 'browser_hosts',
  properties: {
    id: p.string().length(100).primary(),
    /** Where the api reaches this host's relay (BROWSER_HOST_ADDRESS, resolved): the host part of relay URLs. */
    address: p.string().length(255),
    /**
     * The port the host's relay is bound to (server/browsers/host/relay/browserRelay.ts), the only way in
     * to its browsers; null for a host of a version before the relay.
     */
    relayPort: p.integer().nullable(),
    capacity: p.integer(),
    running: p.integer().default(0),
    heartbeatAt: p.datetime(),
    /**
     * The launch signatures this host keeps warm browsers of (the default settings and those started
     * there lately; server/browsers/host/pool/warmPolicy.ts), whether or not one is waiting right now.
     */
    warmSignatures: p.json<string[]>(),
    /**
     * The warm pool as the host last reported it (server/browsers/host/pool/warmPool.ts, `status`):
     * its target, size and hit rate. Null for a host of a version before it.
     */
    warmPool: p.json<WarmPoolStatus>().nullable(),
    /** Set from the moment the host was asked to stop (SIGTERM): it takes no new browsers. */
    drainingSince: p.datetime().nullable(),
    created: created(),
  },
});

export type BrowserHost = InferEntity<typeof BrowserHost>;
