import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { JwtSigner } from '../../server/auth/jwt.ts';
import { PASSWORD, registerUser } from '../support/accounts.ts';
import type { HttpResponse } from '../support/http.ts';
import { tokenFromMail } from '../support/smtp.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const NEW_PASSWORD = 'a brand new passphrase';

let stack: TestStack;
beforeAll(async () => {
  // These files sign up dozens of accounts from one address; rate limits have their own tests.
  stack = await startTestStack({ RATE_LIMITS: 'off' });
  guardAgainstLeaks(stack);
});
afterAll(async () => {
  await stack?.close();
});

/** Every response of this file is checked: no hash column and no password ever comes back out. */
function guardAgainstLeaks(target: TestStack) {
  const request = target.http.request.bind(target.http);
  target.http.request = (async (...args: Parameters<typeof request>) => {
    const response = await request(...args);
    for (const secret of ['passwordHash', 'password_hash', 'secretHash', 'secret_hash', '$argon2', PASSWORD, NEW_PASSWORD]) {
      expect(response.text, `${args[0]} ${args[1]} leaks ${secret}`).not.toContain(secret);
    }
    return response;
  }) as typeof target.http.request;
}

const freshEmail = () => `user-${randomBytes(4).toString('hex')}@example.test`;

type SetCookie = { value: string; attributes: Record<string, string | true> };

/** The `token` cookie a response sets, with its attributes (names lower-cased). */
function tokenCookie(response: HttpResponse): SetCookie | undefined {
  const header = response.headers.getSetCookie().find((cookie) => cookie.startsWith('token='));
  if (!header) return undefined;
  const [pair = '', ...parts] = header.split(';').map((part) => part.trim());
  const attributes: Record<string, string | true> = {};
  for (const part of parts) {
    const [name = '', ...rest] = part.split('=');
    attributes[name.toLowerCase()] = rest.length ? rest.join('=') : true;
  }
  return { value: decodeURIComponent(pair.slice('token='.length)), attributes };
}

function decodeJwtPayload(token: string) {
  return JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString('utf8'));
}

async function register(email = freshEmail(), password = PASSWORD) {
  const response = await stack.http.post('/api/auth/register', { email, password, firstName: 'Grace', lastName: 'Hopper' });
  return { email, response };
}

const verificationMail = (email: string) => stack.smtp.waitFor((mail) => mail.to.includes(email) && /verify/i.test(mail.subject));
const resetMail = (email: string) => stack.smtp.waitFor((mail) => mail.to.includes(email) && /reset/i.test(mail.subject));

/** The `mails` rows of one address, read straight from the table. */
async function mailRows(email: string) {
  return stack.orm.em
    .fork()
    .getConnection()
    .execute<{ status: string; text: string | null }[]>('select status, text from mails where "to" = ? order by created', [email]);
}

const login = (email: string, password: string, remember?: boolean) =>
  stack.http.post('/api/auth/login', remember === undefined ? { email, password } : { email, password, remember });

describe('registration', () => {
  it('a newcomer who registers is signed in as unverified with an HttpOnly, SameSite=Lax cookie', async () => {
    const { email, response } = await register();
    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual({ status: 'email_not_verified', token: expect.any(String) });
    const cookie = tokenCookie(response);
    expect(cookie?.value).toBe(response.body.token);
    expect(cookie?.attributes.httponly).toBe(true);
    expect(String(cookie?.attributes.samesite).toLowerCase()).toBe('lax');
    expect(cookie?.attributes.path).toBe('/');
    // Registration does not "remember": the cookie lives as long as the browser.
    expect(cookie?.attributes.expires).toBeUndefined();
    expect(cookie?.attributes['max-age']).toBeUndefined();

    const me = await stack.http.get('/api/auth', { token: response.body.token });
    expect(me.body).toMatchObject({ status: 'email_not_verified', user: { email, emailVerified: false } });
  });

  it('a newcomer receives the verification mail over SMTP and the mailed token verifies the address', async () => {
    const { email, response } = await register();
    const mail = await verificationMail(email);
    expect(mail.text).toContain('/auth/verify?token=');

    const verified = await stack.http.post('/api/auth/verify/submit', { token: tokenFromMail(mail) });
    expect(verified.status, verified.text).toBe(200);
    expect(verified.body).toEqual({ status: 'ok', token: expect.any(String) });
    expect(verified.body.token).not.toBe(response.body.token);
    const cookie = tokenCookie(verified);
    expect(cookie?.value).toBe(verified.body.token);
    expect(cookie?.attributes.httponly).toBe(true);

    const me = await stack.http.get('/api/auth', { cookie: `token=${verified.body.token}` });
    expect(me.body).toMatchObject({ status: 'ok', user: { email, emailVerified: true } });
  });

  it('a verification token works only once', async () => {
    const { email } = await register();
    const token = tokenFromMail(await verificationMail(email));
    expect((await stack.http.post('/api/auth/verify/submit', { token })).status).toBe(200);
    const again = await stack.http.post('/api/auth/verify/submit', { token });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ status: 'error', code: 'invalid_token', message: expect.any(String) });
  });

  it('a wrong or expired verification token is refused with an error body', async () => {
    const wrong = await stack.http.post('/api/auth/verify/submit', { token: 'x'.repeat(43) });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ status: 'error', code: 'invalid_token', message: expect.any(String) });

    const { email } = await register();
    const token = tokenFromMail(await verificationMail(email));
    await stack.orm.em
      .fork()
      .getConnection()
      .execute(
        `update one_time_tokens set expires_at = now() - interval '1 minute' where user_id = (select id from users where email = ?)`,
        [email],
      );
    const expired = await stack.http.post('/api/auth/verify/submit', { token });
    expect(expired.status).toBe(400);
    expect(expired.body).toMatchObject({ status: 'error', code: 'invalid_token' });
    const me = await login(email, PASSWORD);
    expect(me.body.status).toBe('email_not_verified');
  });

  it('a second account for the same e-mail, in any letter case, is refused with 409', async () => {
    const { email, response } = await register();
    expect(response.status).toBe(200);
    const same = await register(email);
    expect(same.response.status).toBe(409);
    expect(same.response.body).toMatchObject({ status: 'error', code: 'email_taken' });
    const shouted = await register(email.toUpperCase());
    expect(shouted.response.status).toBe(409);
    expect(shouted.response.body).toMatchObject({ status: 'error', code: 'email_taken' });
  });

  it('two registrations racing for one address: one account, the other answer 409', async () => {
    const email = freshEmail();
    const answers = await Promise.all([register(email), register(email), register(email.toUpperCase())]);
    expect(answers.map(({ response }) => response.status).sort()).toEqual([200, 409, 409]);
    for (const { response } of answers.filter(({ response }) => response.status === 409)) {
      expect(response.body).toMatchObject({ status: 'error', code: 'email_taken' });
    }
    const [row] = await stack.orm.em
      .fork()
      .getConnection()
      .execute<{ n: string }[]>('select count(*) as n from users where email = ?', [email]);
    expect(Number(row?.n)).toBe(1);
  });

  it('a registration with a short password or an unknown field is refused with 400 naming the field', async () => {
    const short = await stack.http.post('/api/auth/register', { email: freshEmail(), password: 'short', firstName: 'A', lastName: 'B' });
    expect(short.status).toBe(400);
    expect(short.body).toMatchObject({ status: 'error', code: 'invalid_input' });
    expect(short.body.message).toContain('password');
    const extra = await stack.http.post('/api/auth/register', {
      email: freshEmail(),
      password: PASSWORD,
      firstName: 'A',
      lastName: 'B',
      isAdmin: true,
    });
    expect(extra.status).toBe(400);
    expect(extra.body.message).toContain('isAdmin');
  });

  it('a mail sent over SMTP has its body cleared from the mails table once delivered', async () => {
    const { email } = await register();
    await verificationMail(email);
    await vi.waitFor(
      async () => {
        const rows = await mailRows(email);
        expect(rows).toEqual([{ status: 'sent', text: null }]);
      },
      { timeout: 10_000, interval: 100 },
    );
  });
});

describe('login', () => {
  it('a wrong password and an unknown e-mail get the same 401 answer', async () => {
    const user = await registerUser(stack);
    const wrongPassword = await login(user.email, 'not the password');
    const unknownEmail = await login(freshEmail(), PASSWORD);
    expect(wrongPassword.status).toBe(401);
    expect(unknownEmail.status).toBe(401);
    expect(wrongPassword.body).toEqual(unknownEmail.body);
    expect(wrongPassword.body).toMatchObject({ status: 'error', code: 'invalid_credentials' });
    expect(tokenCookie(wrongPassword)).toBeUndefined();
  });

  it('a user who asks to be remembered gets a cookie that lasts about 30 days', async () => {
    const user = await registerUser(stack);
    const response = await login(user.email, PASSWORD, true);
    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual({ status: 'ok', token: expect.any(String) });
    const cookie = tokenCookie(response);
    expect(cookie?.value).toBe(response.body.token);
    expect(cookie?.attributes.httponly).toBe(true);
    expect(String(cookie?.attributes.samesite).toLowerCase()).toBe('lax');
    const expires = Date.parse(String(cookie?.attributes.expires));
    const days = (expires - Date.now()) / (24 * 60 * 60 * 1000);
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThan(30.1);
  });

  it('a user who does not ask to be remembered gets a browser-session cookie', async () => {
    const user = await registerUser(stack);
    for (const response of [await login(user.email, PASSWORD), await login(user.email, PASSWORD, false)]) {
      expect(response.status, response.text).toBe(200);
      const cookie = tokenCookie(response);
      expect(cookie?.value).toBe(response.body.token);
      expect(cookie?.attributes.expires).toBeUndefined();
      expect(cookie?.attributes['max-age']).toBeUndefined();
    }
  });

  it('a remember flag sent as a string is refused, not read as true', async () => {
    const user = await registerUser(stack);
    const response = await stack.http.post('/api/auth/login', { email: user.email, password: PASSWORD, remember: 'false' });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: 'error', code: 'invalid_input' });
    expect(response.body.message).toContain('remember');
    expect(tokenCookie(response)).toBeUndefined();
  });

  it('a user signs in with the e-mail in any letter case', async () => {
    const user = await registerUser(stack);
    const response = await login(user.email.toUpperCase(), PASSWORD);
    expect(response.status, response.text).toBe(200);
  });

  it('an unverified user who signs in is told the e-mail is not verified, with a working token', async () => {
    const { email } = await register();
    const response = await login(email, PASSWORD);
    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual({ status: 'email_not_verified', token: expect.any(String) });
    const me = await stack.http.get('/api/auth', { token: response.body.token });
    expect(me.body.status).toBe('email_not_verified');
  });

  it('the token works as a cookie and as a Bearer header', async () => {
    const user = await registerUser(stack);
    const { token } = (await login(user.email, PASSWORD)).body;
    const viaCookie = await stack.http.get('/api', { cookie: `token=${token}` });
    expect(viaCookie.body.subject).toMatchObject({ type: 'user', userId: user.id });
    const viaBearer = await stack.http.get('/api', { authorization: `Bearer ${token}` });
    expect(viaBearer.body.subject).toMatchObject({ type: 'user', userId: user.id });
  });

  it('an expired token, or one whose session has expired, is refused with 401', async () => {
    const user = await registerUser(stack);
    const { sid } = decodeJwtPayload(user.token);
    const signer = new JwtSigner(stack.config.jwtSecret as string);
    const stale = await signer.sign({ sub: user.id, sid, kind: 'full' }, new Date(Date.now() - 1000));
    const expired = await stack.http.get('/api/auth', { token: stale });
    expect(expired.status).toBe(401);
    expect(expired.body).toMatchObject({ status: 'error', code: 'invalid_token' });

    await stack.orm.em
      .fork()
      .getConnection()
      .execute(`update auth_sessions set expires_at = now() - interval '1 minute' where id = ?`, [sid]);
    const ended = await stack.http.get('/api/auth', { token: user.token });
    expect(ended.status).toBe(401);
    expect(ended.body).toMatchObject({ status: 'error', code: 'session_ended' });
  });

  it('a forged or garbled Bearer token is refused with 401', async () => {
    const user = await registerUser(stack);
    const [head, payload] = user.token.split('.');
    const forged = await stack.http.get('/api/auth', { token: `${head}.${payload}.${'A'.repeat(43)}` });
    expect(forged.status).toBe(401);
    expect(forged.body).toMatchObject({ status: 'error', code: 'invalid_token' });
    const garbled = await stack.http.get('/api', { authorization: 'Basic abc' });
    expect(garbled.status).toBe(401);
    expect(garbled.body).toMatchObject({ status: 'error' });
    // The tRPC endpoint refuses it the same way.
    const viaTrpc = await stack.http.get('/trpc/auth.status', { token: `${head}.${payload}.${'A'.repeat(43)}` });
    expect(viaTrpc.status).toBe(401);
  });
});

describe('sign-in state and logout', () => {
  it('GET /api/auth shows the status and the decoded token payload', async () => {
    const user = await registerUser(stack);
    const anonymous = await stack.http.get('/api/auth');
    expect(anonymous.status).toBe(200);
    expect(anonymous.body).toEqual({ status: 'anonymous' });

    const me = await stack.http.get('/api/auth', { token: user.token });
    expect(me.status).toBe(200);
    const claims = decodeJwtPayload(user.token);
    expect(me.body.status).toBe('ok');
    expect(me.body.payload).toEqual({ sub: user.id, sid: claims.sid, kind: 'full', iat: claims.iat, exp: claims.exp });
    expect(me.body.user).toMatchObject({ id: user.id, email: user.email, emailVerified: true });
  });

  it('a user who logs out has the cookie cleared and the old token refused', async () => {
    const user = await registerUser(stack);
    const { token } = (await login(user.email, PASSWORD)).body;
    const out = await stack.http.get('/api/auth/logout', { cookie: `token=${token}` });
    expect(out.status, out.text).toBe(200);
    expect(out.body).toEqual({ status: 'ok' });
    const cleared = tokenCookie(out);
    expect(cleared?.value).toBe('');
    const clearedAt = cleared?.attributes.expires ? Date.parse(String(cleared.attributes.expires)) : Number.NaN;
    expect(cleared?.attributes['max-age'] === '0' || clearedAt <= Date.now()).toBe(true);

    const asBearer = await stack.http.get('/api/auth', { token });
    expect(asBearer.status).toBe(401);
    expect(asBearer.body).toMatchObject({ status: 'error', code: 'session_ended' });
    // A stale cookie reads as signed out, so public pages still open.
    const asCookie = await stack.http.get('/api/auth', { cookie: `token=${token}` });
    expect(asCookie.status).toBe(200);
    expect(asCookie.body).toEqual({ status: 'anonymous' });
    // Only that session ended: the one from registration still works.
    expect((await stack.http.get('/api/auth', { token: user.token })).body.status).toBe('ok');
  });

  it('logging out while signed out just clears the cookie', async () => {
    const out = await stack.http.get('/api/auth/logout');
    expect(out.status).toBe(200);
    expect(tokenCookie(out)?.value).toBe('');
  });
});

describe('e-mail verification', () => {
  it('a signed-in unverified user can ask for another verification mail', async () => {
    const { email, response } = await register();
    const first = await verificationMail(email);
    const requested = await stack.http.post('/api/auth/verify/request', {}, { token: response.body.token });
    expect(requested.status, requested.text).toBe(200);
    expect(requested.body).toEqual({ status: 'ok' });
    const second = await stack.smtp.waitFor((mail) => mail !== first && mail.to.includes(email) && /verify/i.test(mail.subject));
    // The new token replaces the first one.
    expect((await stack.http.post('/api/auth/verify/submit', { token: tokenFromMail(first) })).status).toBe(400);
    const verified = await stack.http.post('/api/auth/verify/submit', { token: tokenFromMail(second) });
    expect(verified.status, verified.text).toBe(200);
  });

  it('a verification mail links to a returnUrl on the same origin, and refuses another origin', async () => {
    const { email, response } = await register();
    const first = await verificationMail(email);
    const bodyless = await stack.http.post('/api/auth/verify/request', undefined, { token: response.body.token });
    expect(bodyless.status, bodyless.text).toBe(200);
    const second = await stack.smtp.waitFor((mail) => mail !== first && mail.to.includes(email));
    const own = await stack.http.post('/api/auth/verify/request', { returnUrl: '/welcome' }, { token: response.body.token });
    expect(own.status, own.text).toBe(200);
    const third = await stack.smtp.waitFor((mail) => mail !== first && mail !== second && mail.to.includes(email));
    expect(third.text).toContain(`${stack.config.publicUrl}/welcome?token=`);

    const foreign = await stack.http.post(
      '/api/auth/verify/request',
      { returnUrl: 'https://evil.example/phish' },
      { token: response.body.token },
    );
    expect(foreign.status).toBe(400);
    expect(foreign.body).toMatchObject({ status: 'error', code: 'invalid_return_url' });
  });

  it('a user who verifies while signed in gets the session refreshed, remembered as before', async () => {
    const { email } = await register();
    const token = tokenFromMail(await verificationMail(email));
    const remembered = (await login(email, PASSWORD, true)).body.token as string;
    const verified = await stack.http.post('/api/auth/verify/submit', { token }, { cookie: `token=${remembered}` });
    expect(verified.status, verified.text).toBe(200);
    expect(verified.body.status).toBe('ok');
    const cookie = tokenCookie(verified);
    expect(cookie?.value).toBe(verified.body.token);
    const days = (Date.parse(String(cookie?.attributes.expires)) - Date.now()) / (24 * 60 * 60 * 1000);
    expect(days).toBeGreaterThan(29.9);
    // The refreshed token replaces the old one.
    expect((await stack.http.get('/api/auth', { token: remembered })).status).toBe(401);
    expect((await stack.http.get('/api/auth', { token: verified.body.token })).body.status).toBe('ok');
  });

  it('a verified user who asks for another verification mail is told it is already verified', async () => {
    const user = await registerUser(stack);
    const response = await stack.http.post('/api/auth/verify/request', {}, { token: user.token });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: 'error', code: 'already_verified' });
  });

  it('asking for a verification mail needs a signed-in user', async () => {
    const response = await stack.http.post('/api/auth/verify/request', {});
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ status: 'error' });
  });

  it('an unverified user cannot create a project (400 email_not_verified)', async () => {
    const { response } = await register();
    const created = await stack.http.put(
      '/api/projects',
      { name: 'Nope', slug: `p-${randomBytes(4).toString('hex')}`, public: false },
      { token: response.body.token },
    );
    expect(created.status).toBe(400);
    expect(created.body).toMatchObject({ status: 'error', code: 'email_not_verified' });
  });
});

describe('password reset', () => {
  it('a reset request answers the same for known and unknown addresses and mails only the known one', async () => {
    const user = await registerUser(stack);
    const unknown = freshEmail();
    const missing = await stack.http.post('/api/auth/reset/request', { email: unknown });
    const known = await stack.http.post('/api/auth/reset/request', { email: user.email });
    expect(known.status, known.text).toBe(200);
    expect(missing.status).toBe(known.status);
    expect(missing.body).toEqual(known.body);
    const mail = await resetMail(user.email);
    expect(mail.text).toContain('/auth/reset?token=');
    // The unknown address was asked for first: had it been mailed, its row would be there by now.
    expect(await mailRows(unknown)).toEqual([]);
    expect(stack.smtp.mails.some((m) => m.to.includes(unknown))).toBe(false);
  });

  it('a reset request with a returnUrl on another origin is refused', async () => {
    const response = await stack.http.post('/api/auth/reset/request', { email: freshEmail(), returnUrl: 'https://evil.example/' });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: 'error', code: 'invalid_return_url' });
  });

  it('a reset with a mismatching confirmPassword is refused with 400 naming confirmPassword', async () => {
    const user = await registerUser(stack);
    await stack.http.post('/api/auth/reset/request', { email: user.email });
    const token = tokenFromMail(await resetMail(user.email));
    const response = await stack.http.post('/api/auth/reset/submit', { token, password: NEW_PASSWORD, confirmPassword: 'something else' });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: 'error', code: 'invalid_input' });
    expect(response.body.message).toContain('confirmPassword');
    expect(response.body.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path: ['confirmPassword'] })]));
    // The refused attempt did not use up the token.
    const retried = await stack.http.post('/api/auth/reset/submit', { token, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD });
    expect(retried.status, retried.text).toBe(200);
  });

  it('a user who resets the password is signed out everywhere else and signs in with the new password only', async () => {
    const user = await registerUser(stack);
    const laptop = (await login(user.email, PASSWORD, true)).body.token as string;
    const phone = user.token;
    await stack.http.post('/api/auth/reset/request', { email: user.email });
    const token = tokenFromMail(await resetMail(user.email));

    const reset = await stack.http.post('/api/auth/reset/submit', { token, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD });
    expect(reset.status, reset.text).toBe(200);
    expect(reset.body).toEqual({ status: 'ok', token: expect.any(String) });
    expect(tokenCookie(reset)?.value).toBe(reset.body.token);

    for (const old of [laptop, phone]) {
      const refused = await stack.http.get('/api/auth', { token: old });
      expect(refused.status).toBe(401);
    }
    expect((await stack.http.get('/api/auth', { token: reset.body.token })).body.status).toBe('ok');
    expect((await login(user.email, PASSWORD)).status).toBe(401);
    expect((await login(user.email, NEW_PASSWORD)).status).toBe(200);
  });

  it('a reset token works only once', async () => {
    const user = await registerUser(stack);
    await stack.http.post('/api/auth/reset/request', { email: user.email });
    const token = tokenFromMail(await resetMail(user.email));
    const body = { token, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD };
    expect((await stack.http.post('/api/auth/reset/submit', body)).status).toBe(200);
    const again = await stack.http.post('/api/auth/reset/submit', {
      ...body,
      password: `${NEW_PASSWORD}!`,
      confirmPassword: `${NEW_PASSWORD}!`,
    });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ status: 'error', code: 'invalid_token' });
    expect((await login(user.email, NEW_PASSWORD)).status).toBe(200);
  });

  it('an expired reset token is refused and the password stays as it was', async () => {
    const user = await registerUser(stack);
    await stack.http.post('/api/auth/reset/request', { email: user.email });
    const token = tokenFromMail(await resetMail(user.email));
    await stack.orm.em
      .fork()
      .getConnection()
      .execute(`update one_time_tokens set expires_at = now() - interval '1 minute' where purpose = 'reset_password' and user_id = ?`, [
        user.id,
      ]);
    const expired = await stack.http.post('/api/auth/reset/submit', { token, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD });
    expect(expired.status).toBe(400);
    expect(expired.body).toMatchObject({ status: 'error', code: 'invalid_token' });
    expect((await login(user.email, PASSWORD)).status).toBe(200);
    expect((await login(user.email, NEW_PASSWORD)).status).toBe(401);
  });

  it('a verification token cannot be used to reset a password', async () => {
    const { email } = await register();
    const token = tokenFromMail(await verificationMail(email));
    const response = await stack.http.post('/api/auth/reset/submit', { token, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: 'error', code: 'invalid_token' });
  });
});

describe('behind https', () => {
  let secure: TestStack;
  beforeAll(async () => {
    secure = await startTestStack({ RATE_LIMITS: 'off', PUBLIC_URL: 'https://browserflow.example' });
  });
  afterAll(async () => {
    await secure?.close();
  });

  it('a user signing in behind https gets a Secure cookie and mail links on the public address', async () => {
    const email = freshEmail();
    const registered = await secure.http.post('/api/auth/register', { email, password: PASSWORD, firstName: 'Ada', lastName: 'Lovelace' });
    expect(registered.status, registered.text).toBe(200);
    expect(tokenCookie(registered)?.attributes.secure).toBe(true);
    const mail = await secure.smtp.waitFor((m) => m.to.includes(email));
    expect(mail.text).toContain('https://browserflow.example/auth/verify?token=');
    const out = await secure.http.get('/api/auth/logout', { cookie: `token=${registered.body.token}` });
    expect(tokenCookie(out)?.attributes.secure).toBe(true);
  });
});
