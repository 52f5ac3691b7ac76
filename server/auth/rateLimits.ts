import { isIP } from 'node:net';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config, RateLimitedAction } from '../config.ts';
import { RateLimited } from '../errors.ts';
import { sha256 } from './secrets.ts';

/**
 * Fixed-window rate limits kept in PostgreSQL (`rate_limit_buckets`), so every api replica sees
 * the same counts. Each limited action counts per client IP and per account (an e-mail address
 * or a user id); either one running over answers 429 with the seconds until its window ends.
 */

type Keys = { ip?: string; account?: string };

/**
 * Every rate-limited route, named as the OpenAPI document names it, with the action whose limits
 * it counts against. `enforceRateLimit` takes the route, so no route is limited without being
 * listed here, and the document lists 429 for each route here (server/http/openapiContract.ts).
 */
export const rateLimitedRoutes = {
  'POST /api/auth/login': 'login',
  // Guessing the current password with a stolen session counts like guessing it at login.
  'POST /api/auth/password': 'login',
  'POST /api/auth/register': 'register',
  'POST /api/auth/external/register': 'register',
  'POST /api/auth/reset/request': 'resetRequest',
  'POST /api/auth/verify/submit': 'verifySubmit',
  'POST /api/auth/2fa/enable/submit': 'twoFactor',
  'POST /api/auth/2fa/verify': 'twoFactor',
  'POST /api/auth/2fa/reset': 'twoFactor',
  'POST /api/auth/2fa/recovery-codes': 'twoFactor',
  'GET /api/auth/external/{provider}/init': 'externalFlow',
  'GET /api/auth/external/{provider}/redirect': 'externalFlow',
} as const satisfies Record<string, RateLimitedAction>;
export type RateLimitedRoute = keyof typeof rateLimitedRoutes;

/** What a request's address is counted under: see `rateLimitAddress`. */
type Addressed = { ip: string; socket?: { remoteAddress?: string } };

/**
 * The client address a per-IP limit counts. Behind TRUST_PROXY it comes from X-Forwarded-For,
 * which the client writes: only a real IP address is taken (else the socket's address), and an
 * IPv6 address counts as its /64, the block one subscriber usually holds.
 */
export function rateLimitAddress(req: Addressed) {
  const candidates = [req.ip, req.socket?.remoteAddress];
  const ip = candidates.find((value): value is string => typeof value === 'string' && isIP(value.split('%')[0] ?? '') !== 0);
  if (!ip) return 'unknown';
  const address = ip.split('%')[0] as string;
  return isIP(address) === 6 ? ipv6Block(address) : address;
}

/** `2001:db8:1:2::/64` for any address in that /64; an IPv4-mapped address as its IPv4 form. */
function ipv6Block(address: string) {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return mapped[1];
  const [head = '', tail] = address.split('::');
  const groups = (part: string) => (part ? part.split(':') : []).flatMap((group) => (group.includes('.') ? ['0', '0'] : [group]));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${all
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}

// One statement per hit: the row is created, restarted when its window has passed, or counted
// up, atomically under concurrent requests. The database's clock decides, not the replica's.
const hitSql = `
insert into rate_limit_buckets ("key", hits, reset_at) values (?, 1, now() + make_interval(secs => ?))
on conflict ("key") do update set
  hits = case when rate_limit_buckets.reset_at <= now() then 1 else rate_limit_buckets.hits + 1 end,
  reset_at = case when rate_limit_buckets.reset_at <= now() then excluded.reset_at else rate_limit_buckets.reset_at end
returning hits, greatest(1, ceil(extract(epoch from (reset_at - now()))))::int as retry_after`;

/**
 * Bucket keys never hold an e-mail address in clear. With `perAccountAllIps` (login), an account's
 * attempts count per account and address, so guesses from one address cannot lock the owner
 * out everywhere, and all addresses together have the larger cap.
 */
function bucketKeys(action: RateLimitedAction, keys: Keys, rule: { perAccountAllIps?: number } | undefined) {
  const result: { key: string; dimension: 'perIp' | 'perAccount' | 'perAccountAllIps' }[] = [];
  if (keys.ip) result.push({ key: `${action}:ip:${keys.ip}`, dimension: 'perIp' });
  if (!keys.account) return result;
  const account = keys.account.toLowerCase();
  if (rule?.perAccountAllIps === undefined) {
    result.push({ key: `${action}:account:${sha256(account)}`, dimension: 'perAccount' });
  } else {
    if (keys.ip) result.push({ key: `${action}:account-ip:${sha256(`${account}\n${keys.ip}`)}`, dimension: 'perAccount' });
    result.push({ key: `${action}:account:${sha256(account)}`, dimension: 'perAccountAllIps' });
  }
  return result;
}

/**
 * Counts one attempt at `route`'s action and throws RateLimited when the IP or the account has
 * used up its window. The attempt is counted before it is checked (check and count are one step,
 * so concurrent guesses cannot slip through); a success then takes the account's counts back with
 * `clearAccountRateLimit`, so the account limits count failures. `keys.ip` comes from
 * `rateLimitAddress`.
 */
export async function enforceRateLimit(em: EntityManager, config: Config, route: RateLimitedRoute, keys: Keys) {
  const action = rateLimitedRoutes[route];
  const rule = config.rateLimits?.[action];
  if (!rule) return;
  const connection = em.getConnection();
  let retryAfter = 0;
  for (const { key, dimension } of bucketKeys(action, keys, rule)) {
    const max = rule[dimension] ?? 0;
    if (max === 0) continue;
    const [row] = await connection.execute<{ hits: number; retry_after: number }[]>(hitSql, [key, rule.windowSeconds], 'all');
    if (row && row.hits > max) retryAfter = Math.max(retryAfter, row.retry_after);
  }
  // Windows that ended are deleted by the housekeeping workflow; a missing row and an ended one count the same.
  if (retryAfter > 0) throw new RateLimited(retryAfter);
}

/**
 * Forgets the account's counts after a success (the password or the code was right), so a user
 * who mistyped a few times is not locked out later in the window. The IP's count stays.
 */
export async function clearAccountRateLimit(em: EntityManager, action: RateLimitedAction, account: string, ip?: string) {
  // The account's key and, given the address, its account-and-address key.
  const keys = bucketKeys(action, { account, ip }, { perAccountAllIps: 0 }).filter(({ dimension }) => dimension !== 'perIp');
  await em.getConnection().execute(
    `delete from rate_limit_buckets where "key" in (${keys.map(() => '?').join(', ')})`,
    keys.map(({ key }) => key),
    'run',
  );
}
