import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created } from './common.ts';

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
    /** Set from the moment the host was asked to stop (SIGTERM): it takes no new browsers. */
    drainingSince: p.datetime().nullable(),
    created: created(),
  },
});

export type BrowserHost = InferEntity<typeof BrowserHost>;
