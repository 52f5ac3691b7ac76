import { isIP } from 'node:net';
import type { EntityManager } from '@mikro-orm/postgresql';
import { BrowserHost } from '../../../db/entities/index.ts';
import { ServiceUnavailable } from '../../errors.ts';
import type { RelayTokens } from '../tokens/relayTokens.ts';

/** What of a resource row says where its browser is. */
export type DialableResource = { id: string; hostId?: string | null; externalCdpUrl?: string | null; cdpEndpoint?: string | null };

/**
 * The URL the api dials to reach a resource's browser over CDP (the CDP proxy, the live view,
 * cookie capture, warm-start cookies): the relay of its host, found in `browser_hosts`, with a fresh
 * token for this resource on that host (server/browsers/host/relay/browserRelay.ts). The api never dials
 * a DevTools port itself: those listen on their host's loopback.
 *
 * A browser registered through PUT /api/external-session runs elsewhere, at its own CDP URL, which
 * its host dialed too; it is behind no host's relay, so it is dialed at that URL, as before.
 */
export async function browserDialUrl(deps: { relayTokens: RelayTokens }, em: EntityManager, resource: DialableResource) {
  if (resource.externalCdpUrl && resource.cdpEndpoint) return resource.cdpEndpoint;
  const host = resource.hostId ? await em.fork().findOne(BrowserHost, { id: resource.hostId }, { fields: ['address', 'relayPort'] }) : null;
  if (!host?.relayPort) throw new ServiceUnavailable('The browser host of this browser is not reachable');
  const address = isIP(host.address) === 6 ? `[${host.address}]` : host.address;
  const token = deps.relayTokens.mint(resource.id, resource.hostId as string);
  return `ws://${address}:${host.relayPort}/resources/${resource.id}?token=${token}`;
}
