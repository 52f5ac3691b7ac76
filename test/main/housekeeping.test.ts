import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowIds } from '../../workflows/contracts/workflowIds.ts';
import { registerUser } from '../support/accounts.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/** Expired rows go: the control worker keeps the housekeeping workflow running, and each pass deletes them. */

let stack: TestStack;
let userId: string;
/** A live session of the user: a pending link's session must outlive the pass, or the link goes with it. */
let sessionId: string;

beforeAll(async () => {
  stack = await startTestStack();
  const user = await registerUser(stack);
  userId = user.id;
  sessionId = JSON.parse(Buffer.from(user.token.split('.')[1] ?? '', 'base64url').toString()).sid;
});
afterAll(async () => {
  await stack?.close();
});

const hash = () => randomBytes(32).toString('hex');

/** One row per table that expired `ago` ago (an interval), each with its own id; answers the ids. */
async function expiredRows(ago: string) {
  const connection = stack.orm.em.getConnection();
  const ids = {
    session: randomUUID(),
    token: randomUUID(),
    registration: randomUUID(),
    link: randomUUID(),
    bucket: `login:ip:${randomUUID()}`,
  };
  await connection.execute(
    `insert into auth_sessions (id, user_id, kind, remember, expires_at, created) values (?, ?, 'full', false, now() - interval '${ago}', now())`,
    [ids.session, userId],
  );
  await connection.execute(
    `insert into one_time_tokens (id, user_id, purpose, token_hash, expires_at, created) values (?, ?, 'reset_password', ?, now() - interval '${ago}', now())`,
    [ids.token, userId, hash()],
  );
  await connection.execute(
    `insert into external_registrations (id, token_hash, provider, subject, email, email_verified, expires_at, created)
     values (?, ?, 'idp', ?, 'someone@example.test', true, now() - interval '${ago}', now())`,
    [ids.registration, hash(), randomUUID()],
  );
  await connection.execute(
    `insert into external_link_requests (id, token_hash, user_id, session_id, provider, subject, email, email_verified, return_to, expires_at, created)
     values (?, ?, ?, ?, 'idp', ?, 'someone@example.test', true, '/', now() - interval '${ago}', now())`,
    [ids.link, hash(), userId, sessionId, randomUUID()],
  );
  await connection.execute(`insert into rate_limit_buckets (key, hits, reset_at) values (?, 3, now() - interval '${ago}')`, [ids.bucket]);
  return ids;
}

async function remaining(ids: Awaited<ReturnType<typeof expiredRows>>) {
  const connection = stack.orm.em.getConnection();
  const count = async (sql: string, id: string) => Number((await connection.execute(sql, [id]))[0]?.count);
  return {
    session: await count('select count(*) from auth_sessions where id = ?', ids.session),
    token: await count('select count(*) from one_time_tokens where id = ?', ids.token),
    registration: await count('select count(*) from external_registrations where id = ?', ids.registration),
    link: await count('select count(*) from external_link_requests where id = ?', ids.link),
    bucket: await count('select count(*) from rate_limit_buckets where key = ?', ids.bucket),
  };
}

describe('housekeeping', () => {
  it('deletes sessions, tokens, registrations and pending links a day past expiry and rate-limit windows an hour past', async () => {
    const workflowId = workflowIds.housekeeping(stack.config.temporal.taskQueue);
    const handle = stack.temporal.workflow.getHandle(workflowId);
    expect((await handle.describe()).status.name).toBe('RUNNING');

    const old = await expiredRows('2 days');
    const recent = await expiredRows('30 minutes');
    const midway = await expiredRows('3 hours');

    // A pass runs as the workflow starts: start it anew, as a control worker would.
    await handle.terminate('test: run a pass now');
    await stack.temporal.workflow.start('housekeepingWorkflow', {
      taskQueue: stack.config.temporal.taskQueue,
      workflowId,
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    await expect
      .poll(() => remaining(old), { timeout: 20_000, interval: 200 })
      .toEqual({ session: 0, token: 0, registration: 0, link: 0, bucket: 0 });
    expect(await remaining(recent)).toEqual({ session: 1, token: 1, registration: 1, link: 1, bucket: 1 });
    expect(await remaining(midway)).toEqual({ session: 1, token: 1, registration: 1, link: 1, bucket: 0 });
    // The signed-up user's own session and mail token were never expired: they stay.
    const live = await stack.orm.em
      .getConnection()
      .execute('select count(*) from auth_sessions where user_id = ? and expires_at > now()', [userId]);
    expect(Number(live[0]?.count)).toBeGreaterThan(0);
  });
});
