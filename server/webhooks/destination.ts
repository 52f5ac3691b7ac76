import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import type { Config } from '../config.ts';
import { EgressPolicy } from '../net/egressPolicy.ts';

/**
 * Where a webhook may go (docs/webhooks.md, Destinations): the browsers' egress policy holds for
 * endpoints too, so a tenant cannot make the service call its own loopback, a private network or a
 * cloud's metadata address. The name is resolved here and every address checked: when the endpoint
 * is made, and again before each delivery, whose connection then goes to the address checked (a
 * DNS answer that changes in between leads nowhere a literal could not).
 */

export const MAX_WEBHOOK_URL_LENGTH = 2000;

/** What is wrong with the URL as written, before any lookup; null when nothing. */
export function webhookUrlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not carry a user name or password (put a token in the path or query instead)';
  if (!url.hostname) return 'has no host';
  return null;
}

export type Destination = { address: string; family: 4 | 6 };
export type DestinationCheck = { ok: true; destination: Destination } | { ok: false; reason: string };

type DestinationChecker = (url: URL) => Promise<DestinationCheck>;

/** One checker per configuration: it holds the policy and the resolver. */
const checkers = new WeakMap<Config, DestinationChecker>();

/** Checks a URL's host against the egress policy after resolving it (`WEBHOOK_DNS_SERVER` if set). */
export function checkDestination(config: Config, url: URL): Promise<DestinationCheck> {
  let check = checkers.get(config);
  if (!check) {
    check = destinationChecker(config);
    checkers.set(config, check);
  }
  return check(url);
}

function destinationChecker(config: Config): DestinationChecker {
  // Always the restricted policy: opening the browsers' egress does not open the control plane.
  const policy = new EgressPolicy(config.webhooks.allowedDestinations);
  const resolve = resolverFor(config.webhooks.dnsServer);
  return async (url) => {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    let addresses: string[];
    try {
      addresses = isIP(host) ? [host] : await resolve(host);
    } catch (error) {
      return { ok: false, reason: `${host} could not be resolved (${(error as NodeJS.ErrnoException).code ?? 'lookup failed'})` };
    }
    if (!addresses.length) return { ok: false, reason: `${host} has no address` };
    const decision = policy.check(host, port, addresses);
    if (!decision.allowed) return { ok: false, reason: `${host} is not an allowed destination: ${decision.reason}` };
    const address = addresses[0] as string;
    return { ok: true, destination: { address, family: isIP(address) === 6 ? 6 : 4 } };
  };
}

function resolverFor(server: string | undefined): (host: string) => Promise<string[]> {
  if (!server) {
    return async (host) => (await dns.lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
  }
  const resolver = new dns.Resolver({ timeout: 2000, tries: 2 });
  resolver.setServers([server]);
  return async (host) => {
    const answers = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    const found = answers.flatMap((answer) => (answer.status === 'fulfilled' ? answer.value : []));
    if (!found.length && answers[0].status === 'rejected') throw answers[0].reason;
    return found;
  };
}
