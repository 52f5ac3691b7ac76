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

// One statement per hit: the row is created, restarted when its window has passed, or counted
// up, atomically under concurrent requests. The database's clock decides, not the replica's.
const hitSql = `
insert into rate_limit_buckets ("key", hits, reset_at) values (?, 1, now() + make_interval(secs => ?))
on conflict ("key") do update set
  hits = case when rate_limit_buckets.reset_at <= now() then 1 else rate_limit_buckets.hits + 1 end,
  reset_at = case when rate_limit_buckets.reset_at <= now() then excluded.reset_at else rate_limit_buckets.reset_at end
returning hits, greatest(1, ceil(extract(epoch from (reset_at - now()))))::int as retry_after`;

/** Bucket keys never hold an e-mail address in clear. */
function bucketKeys(action: RateLimitedAction, keys: Keys) {
  const result: { key: string; dimension: 'perIp' | 'perAccount' }[] = [];
  if (keys.ip) result.push({ key: `${action}:ip:${keys.ip}`, dimension: 'perIp' });
  if (keys.account) result.push({ key: `${action}:account:${sha256(keys.account.toLowerCase())}`, dimension: 'perAccount' });
  return result;
}

/**
 * Counts one attempt at `action` and throws RateLimited when the IP or the account has used up
 * its window. Every attempt counts, successful or not, so the check and the count are one step.
 */
export async function enforceRateLimit(em: EntityManager, config: Config, action: RateLimitedAction, keys: Keys) {
  const rule = config.rateLimits?.[action];
  if (!rule) return;
  const connection = em.getConnection();
  let retryAfter = 0;
  for (const { key, dimension } of bucketKeys(action, keys)) {
    const max = rule[dimension];
    if (max === 0) continue;
    const [row] = await connection.execute<{ hits: number; retry_after: number }[]>(hitSql, [key, rule.windowSeconds], 'all');
    if (row && row.hits > max) retryAfter = Math.max(retryAfter, row.retry_after);
  }
  // Now and then, drop windows that ended; a missing row and an ended one count the same.
  if (Math.random() < 0.01) {
    await connection.execute(`delete from rate_limit_buckets where reset_at < now() - interval '1 hour'`, [], 'run');
  }
  if (retryAfter > 0) throw new RateLimited(retryAfter);
}

/**
 * Forgets the account's count after a success (the password or the code was right), so a user who
 * mistyped a few times is not locked out later in the window. The IP's count stays.
 */
export async function clearAccountRateLimit(em: EntityManager, action: RateLimitedAction, account: string) {
  const keys = bucketKeys(action, { account });
  await em.getConnection().execute(
    `delete from rate_limit_buckets where "key" in (${keys.map(() => '?').join(', ')})`,
    keys.map(({ key }) => key),
    'run',
  );
}
