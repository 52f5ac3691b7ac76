import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created } from './common.ts';

/** A process that hosts browsers; it heartbeats while alive. Picked by `pickBrowserHost`. */
export const BrowserHost = defineEntity({
  name: 'BrowserHost',
  tableName: 'browser_hosts',
  properties: {
    id: p.string().length(100).primary(),
    /** Where the api reaches this host's relay (BROWSER_HOST_ADDRESS, resolved): the host part of relay URLs. */
    address: p.string().length(255),
    /**
     * The port the host's relay is bound to (server/browsers/host/browserRelay.ts), the only way in
     * to its browsers; null for a host of a version before the relay.
     */
    relayPort: p.integer().nullable(),
    capacity: p.integer(),
    running: p.integer().default(0),
    heartbeatAt: p.datetime(),
    created: created(),
  },
});

export type BrowserHost = InferEntity<typeof BrowserHost>;
