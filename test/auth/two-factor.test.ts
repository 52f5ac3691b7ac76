import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, PASSWORD, registerUser } from '../support/accounts.ts';
import { tokenFromMail } from '../support/smtp.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * TOTP two-factor sign-in with real codes (otplib computes what an authenticator app would
 * show). The server accepts each time step once and nothing older than the last accepted one,
 * so the tests keep track of the steps they used.
 */

const PERIOD = 30;
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

const stepNow = () => Math.floor(Date.now() / 1000 / PERIOD);
const codeAt = (secret: string, step: number) => generate({ secret, epoch: step * PERIOD });

/** An authenticator for one secret that never offers a step the server has already accepted. */
class Authenticator {
  readonly secret: string;
  lastStep = -1;
  constructor(secret: string) {
    this.secret = secret;
  }

  /** A code of the current or the next step (both within the allowed drift), newer than the last used. */
  async fresh() {
    for (;;) {
      const now = stepNow();
      const step = [now, now + 1].find((candidate) => candidate > this.lastStep);
      if (step !== undefined) {
        this.lastStep = step;
        return codeAt(this.secret, step);
      }
      await sleep((now + 1) * PERIOD * 1000 - Date.now() + 100);
    }
  }
}

/** Waits until the clock is safely inside a step, so "one step off" cannot turn into two mid-request. */
async function midStep() {
  const into = (Date.now() / 1000) % PERIOD;
  if (into < 2 || into > PERIOD - 6) await sleep(((PERIOD - into + 2) % PERIOD) * 1000);
}

async function login(email: string, password = PASSWORD) {
  const response = await stack.http.post('/api/auth/login', { email, password });
  expect(response.status, response.text).toBe(200);
  return response;
}

/** Registers a verified user and turns two-factor sign-in on. */
async function userWithTwoFactor() {
  const user = await registerUser(stack);
  const setup = await stack.http.post('/api/auth/2fa/enable/request', undefined, { token: user.token });
  expect(setup.status, setup.text).toBe(200);
  const app = new Authenticator(setup.body.secret);
  const enabled = await stack.http.post('/api/auth/2fa/enable/submit', { token: await app.fresh() }, { token: user.token });
  expect(enabled.status, enabled.text).toBe(200);
  return { ...user, token: enabled.body.token as string, app, recoveryCodes: enabled.body.recoveryCodes as string[] };
}

describe('turning two-factor sign-in on', () => {
  it('needs a verified e-mail address (400) and a session, not an API key (403)', async () => {
    const unverified = await registerUser(stack, { verify: false });
    const refused = await stack.http.post('/api/auth/2fa/enable/request', undefined, { token: unverified.token });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('email_not_verified');

    const verified = await registerUser(stack);
    const key = await createApiKey(stack, verified.token, { accessType: 'full' });
    const byKey = await stack.http.post('/api/auth/2fa/enable/request', undefined, { apiKey: key.secret });
    expect(byKey.status).toBe(403);
    expect((await stack.http.post('/api/auth/2fa/enable/request')).status).toBe(401);
  });

  it('answers the secret once, turns on with a current code, shows ten recovery codes and ends other sessions', async () => {
    const user = await registerUser(stack);
    const other = (await login(user.email)).body.token as string;

    const setup = await stack.http.post('/api/auth/2fa/enable/request', undefined, { token: user.token });
    expect(setup.status, setup.text).toBe(200);
    expect(setup.body.status).toBe('2fa_setup');
    expect(setup.body.secret).toMatch(/^[A-Z2-7]{32}$/);
    const url = new URL(setup.body.url);
    expect(url.protocol).toBe('otpauth:');
    expect(url.host).toBe('totp');
    expect(url.searchParams.get('secret')).toBe(setup.body.secret);
    expect(decodeURIComponent(url.pathname)).toContain(user.email);
    expect((await stack.http.get('/api/auth/2fa', { token: user.token })).body).toEqual({ enabled: false, recoveryCodesRemaining: 0 });
    // The database keeps it sealed, never in clear.
    const [stored] = await stack.orm.em.fork().execute<{ totp_secret: string }[]>('select totp_secret from users where id = ?', [user.id]);
    expect(stored?.totp_secret).toMatch(/^v1\./);
    expect(stored?.totp_secret).not.toContain(setup.body.secret);

    const app = new Authenticator(setup.body.secret);
    const wrong = await stack.http.post(
      '/api/auth/2fa/enable/submit',
      { token: await codeAt(app.secret, stepNow() + 10) },
      { token: user.token },
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('invalid_code');

    const enabled = await stack.http.post('/api/auth/2fa/enable/submit', { token: await app.fresh() }, { token: user.token });
    expect(enabled.status, enabled.text).toBe(200);
    expect(enabled.body.status).toBe('ok');
    expect(enabled.headers.getSetCookie().some((cookie) => cookie.startsWith(`token=${enabled.body.token}`))).toBe(true);
    const codes = enabled.body.recoveryCodes as string[];
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}$/);

    // Every earlier session ended, the refreshed one works.
    expect((await stack.http.get('/api/auth', { token: user.token })).status).toBe(401);
    expect((await stack.http.get('/api/auth', { token: other })).status).toBe(401);
    const fresh = enabled.body.token as string;
    expect((await stack.http.get('/api/auth', { token: fresh })).body.status).toBe('ok');
    expect((await stack.http.get('/api/auth/2fa', { token: fresh })).body).toEqual({ enabled: true, recoveryCodesRemaining: 10 });

    // The secret is never shown again.
    const again = await stack.http.post('/api/auth/2fa/enable/request', undefined, { token: fresh });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('two_factor_enabled');
    expect(again.text).not.toContain(setup.body.secret);
    expect((await stack.http.get('/api/auth', { token: fresh })).text).not.toContain(setup.body.secret);
    expect((await stack.http.get(`/api/users/${user.id}`, { token: fresh })).text).not.toContain(setup.body.secret);
  });
});

describe('signing in with two-factor sign-in on', () => {
  it('answers 2fa_required with a token good only for verify; a right code completes it, once', async () => {
    const user = await userWithTwoFactor();
    const first = await login(user.email);
    expect(first.body.status).toBe('2fa_required');
    const pending = first.body.token as string;
    expect(first.headers.getSetCookie().some((cookie) => cookie.startsWith(`token=${pending}`))).toBe(true);
    expect((await stack.http.get('/api/auth', { token: pending })).body.status).toBe('2fa_required');
    expect((await stack.http.get('/api/api-keys', { token: pending })).status).toBe(401);
    expect(
      (await stack.http.put('/api/projects', { name: 'x', description: '', slug: 'x-2fa', public: false }, { token: pending })).status,
    ).toBe(401);

    // Wrong code, and the code already used to turn 2FA on (a replay): both refused.
    const wrong = await stack.http.post(
      '/api/auth/2fa/verify',
      { token: await codeAt(user.app.secret, stepNow() + 10) },
      { token: pending },
    );
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('invalid_code');
    const replay = await stack.http.post(
      '/api/auth/2fa/verify',
      { token: await codeAt(user.app.secret, user.app.lastStep) },
      { token: pending },
    );
    expect(replay.status).toBe(401);

    // The cookie alone carries the pending token, as in a browser.
    const code = await user.app.fresh();
    const verified = await stack.http.post('/api/auth/2fa/verify', { token: code }, { cookie: `token=${pending}` });
    expect(verified.status, verified.text).toBe(200);
    expect(verified.body.status).toBe('ok');
    expect(verified.body.recoveryCodesRemaining).toBeUndefined();
    const full = verified.body.token as string;
    expect((await stack.http.get('/api/api-keys', { token: full })).status).toBe(200);
    // The pending session is over.
    expect((await stack.http.get('/api/auth', { token: pending })).status).toBe(401);

    // The same code does not open a second sign-in.
    const second = await login(user.email);
    const replayed = await stack.http.post('/api/auth/2fa/verify', { token: code }, { token: second.body.token });
    expect(replayed.status).toBe(401);

    // verify is only for pending sign-ins.
    const notPending = await stack.http.post('/api/auth/2fa/verify', { token: '123456' }, { token: full });
    expect(notPending.status).toBe(401);
    expect(notPending.body.code).toBe('no_2fa_pending');
  });

  it('allows one step of clock drift either way, not two', async () => {
    const user = await registerUser(stack);
    const setup = await stack.http.post('/api/auth/2fa/enable/request', undefined, { token: user.token });
    const secret = setup.body.secret as string;
    const submit = async (step: number) =>
      stack.http.post('/api/auth/2fa/enable/submit', { token: await codeAt(secret, step) }, { token: user.token });

    await midStep();
    expect((await submit(stepNow() - 2)).status).toBe(400);
    expect((await submit(stepNow() + 2)).status).toBe(400);
    // A phone 30 s slow.
    const behind = await submit(stepNow() - 1);
    expect(behind.status, behind.text).toBe(200);

    // A phone 30 s fast, at sign-in.
    await midStep();
    const pending = (await login(user.email)).body.token as string;
    const ahead = await stack.http.post('/api/auth/2fa/verify', { token: await codeAt(secret, stepNow() + 1) }, { token: pending });
    expect(ahead.status, ahead.text).toBe(200);

    // After a code from the next step, the current step's code is older than the last accepted.
    const again = (await login(user.email)).body.token as string;
    const older = await stack.http.post('/api/auth/2fa/verify', { token: await codeAt(secret, stepNow()) }, { token: again });
    expect(older.status).toBe(401);
  });

  it('takes each recovery code once, in any case and with or without dashes; new codes replace the old', async () => {
    const user = await userWithTwoFactor();
    const [first, second] = user.recoveryCodes as [string, string];

    const pending = (await login(user.email)).body.token as string;
    const used = await stack.http.post('/api/auth/2fa/verify', { token: first.toUpperCase().replaceAll('-', ' ') }, { token: pending });
    expect(used.status, used.text).toBe(200);
    expect(used.body.recoveryCodesRemaining).toBe(9);

    const again = (await login(user.email)).body.token as string;
    expect((await stack.http.post('/api/auth/2fa/verify', { token: first }, { token: again })).status).toBe(401);
    const full = used.body.token as string;
    expect((await stack.http.get('/api/auth/2fa', { token: full })).body).toEqual({ enabled: true, recoveryCodesRemaining: 9 });

    // Regenerating needs a current code of the app (a recovery code does not do).
    const byRecovery = await stack.http.post('/api/auth/2fa/recovery-codes', { token: second }, { token: full });
    expect(byRecovery.status).toBe(400);
    const regenerated = await stack.http.post('/api/auth/2fa/recovery-codes', { token: await user.app.fresh() }, { token: full });
    expect(regenerated.status, regenerated.text).toBe(200);
    const fresh = regenerated.body.recoveryCodes as string[];
    expect(fresh).toHaveLength(10);
    expect(fresh).not.toContain(second);

    const third = (await login(user.email)).body.token as string;
    expect((await stack.http.post('/api/auth/2fa/verify', { token: second }, { token: third })).status).toBe(401);
    const withNew = await stack.http.post('/api/auth/2fa/verify', { token: fresh[0] }, { token: third });
    expect(withNew.status, withNew.text).toBe(200);
    expect(withNew.body.recoveryCodesRemaining).toBe(9);
  });

  it('asks for the code after a password reset too', async () => {
    const user = await userWithTwoFactor();
    expect((await stack.http.post('/api/auth/reset/request', { email: user.email })).status).toBe(200);
    const mail = await stack.smtp.waitFor((m) => m.to.includes(user.email) && /reset/i.test(m.subject));
    const reset = await stack.http.post('/api/auth/reset/submit', {
      token: tokenFromMail(mail),
      password: 'a new password',
      confirmPassword: 'a new password',
    });
    expect(reset.status, reset.text).toBe(200);
    expect(reset.body.status).toBe('2fa_required');
    expect((await stack.http.get('/api/api-keys', { token: reset.body.token })).status).toBe(401);
  });
});

describe('secrets stored before they were sealed', () => {
  it('still take codes, and are sealed by the first code that passes', async () => {
    const user = await userWithTwoFactor();
    const em = stack.orm.em.fork();
    await em.execute('update users set totp_secret = ? where id = ?', [user.app.secret, user.id]);
    const pending = (await login(user.email)).body.token as string;
    const verified = await stack.http.post('/api/auth/2fa/verify', { token: await user.app.fresh() }, { token: pending });
    expect(verified.status, verified.text).toBe(200);
    const [stored] = await em.execute<{ totp_secret: string }[]>('select totp_secret from users where id = ?', [user.id]);
    expect(stored?.totp_secret).toMatch(/^v1\./);
    // Sealed now, it keeps working.
    const again = (await login(user.email)).body.token as string;
    expect((await stack.http.post('/api/auth/2fa/verify', { token: await user.app.fresh() }, { token: again })).status).toBe(200);
  });
});

describe('stored state the code cannot match', () => {
  it('refuses codes (not a 500) when the last accepted step is ahead of the clock; a recovery code still works', async () => {
    const user = await userWithTwoFactor();
    const em = stack.orm.em.fork();
    await em.execute('update users set totp_last_step = ? where id = ?', [stepNow() + 3, user.id]);
    const pending = (await login(user.email)).body.token as string;
    const refused = await stack.http.post('/api/auth/2fa/verify', { token: await codeAt(user.app.secret, stepNow()) }, { token: pending });
    expect(refused.status, refused.text).toBe(401);
    expect(refused.body.status).toBe('error');
    const regenerate = await stack.http.post(
      '/api/auth/2fa/recovery-codes',
      { token: await codeAt(user.app.secret, stepNow()) },
      { token: user.token },
    );
    expect(regenerate.status, regenerate.text).toBe(400);
    const recovered = await stack.http.post('/api/auth/2fa/verify', { token: user.recoveryCodes[0] }, { token: pending });
    expect(recovered.status, recovered.text).toBe(200);
  });

  it('refuses codes (not a 500) for a legacy secret that is not base32', async () => {
    const user = await userWithTwoFactor();
    const em = stack.orm.em.fork();
    await em.execute('update users set totp_secret = ? where id = ?', ['not base32 at all!', user.id]);
    const pending = (await login(user.email)).body.token as string;
    const refused = await stack.http.post('/api/auth/2fa/verify', { token: '123456' }, { token: pending });
    expect(refused.status, refused.text).toBe(401);
    const recovered = await stack.http.post('/api/auth/2fa/verify', { token: user.recoveryCodes[0] }, { token: pending });
    expect(recovered.status, recovered.text).toBe(200);
  });
});

describe('recovery codes at rest', () => {
  it('are stored as hashes keyed by the service secret, never in clear', async () => {
    const user = await userWithTwoFactor();
    const em = stack.orm.em.fork();
    const rows = await em.execute<{ code_hash: string }[]>('select code_hash from recovery_codes where user_id = ?', [user.id]);
    expect(rows).toHaveLength(10);
    const normalized = user.recoveryCodes.map((code) => code.replaceAll('-', ''));
    for (const row of rows) {
      expect(row.code_hash).toMatch(/^[0-9a-f]{64}$/);
      for (const code of [...user.recoveryCodes, ...normalized]) expect(row.code_hash).not.toContain(code);
      // Not the hash keyed by the public user id alone.
      const publicKeyed = normalized.map((code) => createHmac('sha256', user.id).update(code).digest('hex'));
      expect(publicKeyed).not.toContain(row.code_hash);
    }
  });

  it('issued under the old hash (keyed by the user id) still work, once', async () => {
    const user = await userWithTwoFactor();
    const em = stack.orm.em.fork();
    const code = 'abcd-efgh-jkmn';
    const legacy = createHmac('sha256', user.id).update('abcdefghjkmn').digest('hex');
    await em.execute('update recovery_codes set code_hash = ? where id = (select id from recovery_codes where user_id = ? limit 1)', [
      legacy,
      user.id,
    ]);
    const pending = (await login(user.email)).body.token as string;
    const used = await stack.http.post('/api/auth/2fa/verify', { token: code }, { token: pending });
    expect(used.status, used.text).toBe(200);
    const again = (await login(user.email)).body.token as string;
    expect((await stack.http.post('/api/auth/2fa/verify', { token: code }, { token: again })).status).toBe(401);
  });
});

describe('turning two-factor sign-in off', () => {
  it('needs a current code or a recovery code, revokes the secret and ends the other sessions', async () => {
    const user = await userWithTwoFactor();
    // A second signed-in device, through a recovery code.
    const pending = (await login(user.email)).body.token as string;
    const other = (await stack.http.post('/api/auth/2fa/verify', { token: user.recoveryCodes[0] }, { token: pending })).body
      .token as string;
    expect((await stack.http.get('/api/auth', { token: other })).body.status).toBe('ok');

    const wrong = await stack.http.post(
      '/api/auth/2fa/reset',
      { token: await codeAt(user.app.secret, stepNow() + 10) },
      { token: user.token },
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('invalid_code');
    const missing = await stack.http.post('/api/auth/2fa/reset', {}, { token: user.token });
    expect(missing.status).toBe(400);

    const reset = await stack.http.post('/api/auth/2fa/reset', { token: await user.app.fresh() }, { token: user.token });
    expect(reset.status, reset.text).toBe(200);
    expect(reset.body).toEqual({ status: 'ok' });
    expect((await stack.http.get('/api/auth', { token: other })).status).toBe(401);
    expect((await stack.http.get('/api/auth', { token: user.token })).body.status).toBe('ok');
    expect((await stack.http.get('/api/auth/2fa', { token: user.token })).body).toEqual({ enabled: false, recoveryCodesRemaining: 0 });

    // Signing in no longer asks; the old recovery codes are gone with the secret.
    expect((await login(user.email)).body.status).toBe('ok');
    const again = await stack.http.post('/api/auth/2fa/reset', { token: user.recoveryCodes[1] }, { token: user.token });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('two_factor_disabled');

    // Turning it on again gives a new secret.
    const setup = await stack.http.post('/api/auth/2fa/enable/request', undefined, { token: user.token });
    expect(setup.status).toBe(200);
    expect(setup.body.secret).not.toBe(user.app.secret);
  });

  it('can be done with a recovery code (a lost phone)', async () => {
    const user = await userWithTwoFactor();
    const reset = await stack.http.post('/api/auth/2fa/reset', { token: user.recoveryCodes[3] }, { token: user.token });
    expect(reset.status, reset.text).toBe(200);
    expect((await login(user.email)).body.status).toBe('ok');
  });
});

describe('changing the password', () => {
  it('needs the current password and ends the other sessions', async () => {
    const user = await registerUser(stack);
    const other = (await login(user.email)).body.token as string;
    const wrong = await stack.http.post(
      '/api/auth/password',
      { currentPassword: 'not it', password: 'a brand new one', confirmPassword: 'a brand new one' },
      { token: user.token },
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('invalid_password');
    const changed = await stack.http.post(
      '/api/auth/password',
      { currentPassword: PASSWORD, password: 'a brand new one', confirmPassword: 'a brand new one' },
      { token: user.token },
    );
    expect(changed.status, changed.text).toBe(200);
    expect((await stack.http.get('/api/auth', { token: other })).status).toBe(401);
    expect((await stack.http.get('/api/auth', { token: user.token })).status).toBe(200);
    expect((await stack.http.post('/api/auth/login', { email: user.email, password: PASSWORD })).status).toBe(401);
    await login(user.email, 'a brand new one');
  });
});
