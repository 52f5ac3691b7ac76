import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created } from './common.ts';

/**
 * A pre-launched browser a host offers. The api claims one in the same transaction that creates
 * the resource (delete … returning, so one claim wins), answers at once, and the resource's
 * workflow then has the host adopt it. A host deletes its rows when it starts and stops.
 * `launchSignature` (server/browsers/launch/launchSignature.ts) is what the browser was launched with:
 * a start claims only a browser of its own session's signature.
 */
export const WarmBrowser = defineEntity({
  name: 'WarmBrowser',
  tableName: 'warm_browsers',
  properties: {
    id: p.uuid().primary(),
    hostId: p.string().length(100).index(),
    cdpEndpoint: p.string().length(500),
    pid: p.integer().nullable(),
    launchSignature: p.string().length(64),
    created: created(),
  },
});

export type WarmBrowser = InferEntity<typeof WarmBrowser>;
