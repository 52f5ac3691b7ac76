import { BlockList, isIP, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { rateLimitAddress } from '../auth/rateLimits.ts';
import type { Config } from '../config.ts';

/**
 * What a slow or greedy client can hold of the api: a request must arrive within
 * REQUEST_TIMEOUT_SECONDS, and one address holds at most MAX_CONNECTIONS_PER_CLIENT connections.
 */

/**
 * How often Node looks for requests past their time. Its default (30 s) lets a request run up to
 * the timeout plus this; a scan of the open connections each second costs next to nothing.
 */
const TIMEOUT_CHECK_MS = 1_000;

/**
 * Fastify's options for the request timeouts. Node times a request from its first byte (from the
 * connection, for the first) until its body is complete; headers and body share the one bound.
 * What comes after is not timed: a response may stream for hours (log streams, MCP), and an
 * upgraded WebSocket (CDP, live view) has left the HTTP parser.
 */
export function requestTimeoutOptions(config: Pick<Config, 'requestTimeoutSeconds'>) {
  const ms = config.requestTimeoutSeconds * 1000;
  return {
    // Fastify sets this on the server it creates; its default, 0, would turn Node's off.
    requestTimeout: ms,
    http: { requestTimeout: ms, headersTimeout: ms, connectionsCheckingInterval: TIMEOUT_CHECK_MS },
  };
}

/** `::ffff:10.0.0.1` as `10.0.0.1`, so a v4 client is one client however the socket spells it. */
function plainAddress(address: string | undefined) {
  if (!address) return undefined;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped?.[1] ?? address;
}

function exemptList(entries: readonly string[]) {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return list;
}

/**
 * Caps the connections open at once per client address (an IPv6 client counts as its /64, as
 * for rate limits). One over the cap is reset as it arrives, before a byte of it is read: no
 * answer is written, since an answer would need its request parsed, which is what a flood of
 * connections must not get. A connection counts until it closes, so the cap holds however the
 * connections are used (slow requests, idle keep-alive, WebSockets, streams).
 */
export function capConnectionsPerClient(server: Server, cap: Config['connectionCap'], log: Logger) {
  if (cap.perClient === 0) return;
  const exempt = exemptList(cap.exempt);
  const open = new Map<string, number>();
  // Addresses over the cap, logged once each time they reach it, not once per refused connection.
  const refusing = new Set<string>();
  // Ahead of the HTTP server's own listener: a refused socket is destroyed before it gets a parser.
  server.prependListener('connection', (socket: Socket) => {
    const address = plainAddress(socket.remoteAddress);
    if (!address) return;
    if (exempt.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4')) return;
    const client = rateLimitAddress({ ip: address });
    const count = open.get(client) ?? 0;
    if (count >= cap.perClient) {
      if (!refusing.has(client)) {
        refusing.add(client);
        log.warn({ client, cap: cap.perClient }, 'a client holds the most connections it may: resetting its new ones');
      }
      socket.destroy();
      return;
    }
    open.set(client, count + 1);
    socket.once('close', () => {
      const left = (open.get(client) ?? 1) - 1;
      if (left > 0) open.set(client, left);
      else open.delete(client);
      refusing.delete(client);
    });
  });
}
