import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created } from './common.ts';

/**
 * A pre-launched browser a host offers. The api claims one in the same transaction that creates
 * the resource (delete … returning, so one claim wins), answers at once, and the resource's
 * workflow then has the host adopt it. A host deletes its rows when it starts and stops.
 */
export const WarmBrowser = defineEntity({
  name: 'WarmBrowser',
  tableName: 'warm_browsers',
  properties: {
    id: p.uuid().primary(),
    hostId: p.string().length(100).index(),
    cdpEndpoint: p.string().length(500),
    pid: p.integer().nullable(),
    created: created(),
  },
});

export type WarmBrowser = InferEntity<typeof WarmBrowser>;
