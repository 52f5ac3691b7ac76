import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created } from './common.ts';

/** A process that hosts browsers; it heartbeats while alive. Picked by `pickBrowserHost`. */
export const BrowserHost = defineEntity({
  name: 'BrowserHost',
  tableName: 'browser_hosts',
  properties: {
    id: p.string().length(100).primary(),
    /** Where the api reaches this host's browsers (the host part of CDP URLs). */
    address: p.string().length(255),
    capacity: p.integer(),
    running: p.integer().default(0),
    heartbeatAt: p.datetime(),
    created: created(),
  },
});

export type BrowserHost = InferEntity<typeof BrowserHost>;
