import { setTimeout as sleep } from 'node:timers/promises';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { User } from '../../db/entities/index.ts';
import { startExternalRegistration } from '../../server/auth/externalAccounts.ts';
import { PASSWORD } from '../support/accounts.ts';
import type { HttpResponse } from '../support/http.ts';
import { tokenFromMail } from '../support/smtp.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Rate limits per client IP and per account, with small numbers and two-second windows. The app
 * trusts X-Forwarded-For here (TRUST_PROXY), so each test speaks from addresses of its own.
 */

const WINDOW = 2;
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({
    TRUST_PROXY: 'true',
    RATE_LIMITS: JSON.stringify({
      login: { perIp: 5, perAccount: 3, perAccountAllIps: 6, windowSeconds: WINDOW },
      register: { perIp: 3, perAccount: 2, windowSeconds: WINDOW },
      resetRequest: { perIp: 3, perAccount: 2, windowSeconds: WINDOW },
      verifySubmit: { perIp: 3, perAccount: 3, windowSeconds: WINDOW },
      twoFactor: { perIp: 20, perAccount: 3, windowSeconds: WINDOW },
      externalFlow: { perIp: 3, windowSeconds: WINDOW },
    }),
  });
});
afterAll(async () => {
  await stack?.close();
});

let lastAddress = 0;
/** A client address no other request of this file uses. */
const newIp = () => {
  lastAddress += 1;
  return `10.${(lastAddress >> 16) & 255}.${(lastAddress >> 8) & 255}.${lastAddress & 255}`;
};
let lastEmail = 0;
const newEmail = () => `limits-${Date.now().toString(36)}-${++lastEmail}@example.test`;

function post(path: string, body: unknown, ip: string, token?: string) {
  return stack.http.request('POST', path, { body, headers: { 'x-forwarded-for': ip }, as: token ? { token } : undefined });
}

function expectLimited(response: HttpResponse) {
  expect(response.status, response.text).toBe(429);
  expect(response.body.code).toBe('rate_limited');
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(WINDOW);
  return retryAfter;
}

const waitOut = (seconds: number) => sleep(seconds * 1000 + 250);

/** A verified account, each request from its own address. */
async function newUser() {
  const email = newEmail();
  const registered = await post('/api/auth/register', { email, password: PASSWORD, firstName: 'Rate', lastName: 'Limit' }, newIp());
  expect(registered.status, registered.text).toBe(200);
  const mail = await stack.smtp.waitFor((m) => m.to.includes(email) && /verify/i.test(m.subject));
  const verified = await post('/api/auth/verify/submit', { token: tokenFromMail(mail) }, newIp());
  expect(verified.status, verified.text).toBe(200);
  return { email, token: verified.body.token as string };
}

describe('login', () => {
  it('limits failed guesses per account and address, known e-mail or not, and recovers after the window', async () => {
    const user = await newUser();
    for (const email of [user.email, newEmail()]) {
      const ip = newIp();
      for (let attempt = 0; attempt < 3; attempt++) {
        expect((await post('/api/auth/login', { email, password: 'wrong password' }, ip)).status).toBe(401);
      }
      // Even the right password waits there: the limit does not reveal whether a guess was right.
      const limited = await post('/api/auth/login', { email, password: PASSWORD }, ip);
      const retryAfter = expectLimited(limited);
      if (email === user.email) {
        await waitOut(retryAfter);
        const after = await post('/api/auth/login', { email, password: PASSWORD }, ip);
        expect(after.status, after.text).toBe(200);
      }
    }
  });

  it('does not lock the owner out: guesses from other addresses leave the right password working', async () => {
    const user = await newUser();
    const attacker = newIp();
    for (let attempt = 0; attempt < 3; attempt++) {
      expect((await post('/api/auth/login', { email: user.email, password: 'wrong password' }, attacker)).status).toBe(401);
    }
    expectLimited(await post('/api/auth/login', { email: user.email, password: 'wrong password' }, attacker));
    const owner = await post('/api/auth/login', { email: user.email, password: PASSWORD }, newIp());
    expect(owner.status, owner.text).toBe(200);
  });

  it('caps failed guesses on one account from all addresses together', async () => {
    const user = await newUser();
    // perAccountAllIps is 6: the seventh attempt from yet another address waits.
    for (let attempt = 0; attempt < 6; attempt++) {
      expect((await post('/api/auth/login', { email: user.email, password: 'wrong password' }, newIp())).status).toBe(401);
    }
    const retryAfter = expectLimited(await post('/api/auth/login', { email: user.email, password: PASSWORD }, newIp()));
    await waitOut(retryAfter);
    expect((await post('/api/auth/login', { email: user.email, password: PASSWORD }, newIp())).status).toBe(200);
  });

  it('forgets the account count after a right password', async () => {
    const user = await newUser();
    for (let round = 0; round < 2; round++) {
      for (let attempt = 0; attempt < 2; attempt++) {
        expect((await post('/api/auth/login', { email: user.email, password: 'wrong password' }, newIp())).status).toBe(401);
      }
      expect((await post('/api/auth/login', { email: user.email, password: PASSWORD }, newIp())).status).toBe(200);
    }
  });

  it('limits attempts per address, across accounts', async () => {
    const ip = newIp();
    for (let attempt = 0; attempt < 5; attempt++) {
      expect((await post('/api/auth/login', { email: newEmail(), password: 'x' }, ip)).status).toBe(401);
    }
    const retryAfter = expectLimited(await post('/api/auth/login', { email: newEmail(), password: 'x' }, ip));
    expect((await post('/api/auth/login', { email: newEmail(), password: 'x' }, newIp())).status).toBe(401);
    await waitOut(retryAfter);
    expect((await post('/api/auth/login', { email: newEmail(), password: 'x' }, ip)).status).toBe(401);
  });

  it('counts only real addresses from X-Forwarded-For, and an IPv6 client by its /64', async () => {
    // A long or bogus header is not a key: it falls back to the socket's address, never a 500.
    const junk = await post('/api/auth/login', { email: newEmail(), password: 'x' }, `${'x'.repeat(500)}, not-an-ip`);
    expect(junk.status, junk.text).toBe(401);
    const block = `2001:db8:${(Date.now() % 65535).toString(16)}:1`;
    for (let attempt = 0; attempt < 5; attempt++) {
      // Five addresses of one /64, written differently.
      const address = attempt % 2 ? `${block}::${attempt.toString(16)}` : `${block}:0:0:0:${attempt}`;
      expect((await post('/api/auth/login', { email: newEmail(), password: 'x' }, address)).status).toBe(401);
    }
    expectLimited(await post('/api/auth/login', { email: newEmail(), password: 'x' }, `${block}:ffff:ffff:ffff:ffff`));
    expect((await post('/api/auth/login', { email: newEmail(), password: 'x' }, `${block.replace(/:1$/, ':2')}::1`)).status).toBe(401);
  });

  it('answers 429 with Retry-After on the tRPC path too', async () => {
    const email = newEmail();
    const ip = newIp();
    const call = () =>
      stack.http.request('POST', '/trpc/auth.login', { body: { email, password: 'x' }, headers: { 'x-forwarded-for': ip } });
    for (let attempt = 0; attempt < 3; attempt++) expect((await call()).status).toBe(401);
    const limited = await call();
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('register', () => {
  it('limits registrations per address and attempts per e-mail address', async () => {
    const ip = newIp();
    for (let attempt = 0; attempt < 3; attempt++) {
      const created = await post('/api/auth/register', { email: newEmail(), password: PASSWORD, firstName: 'A', lastName: 'B' }, ip);
      expect(created.status, created.text).toBe(200);
    }
    const retryAfter = expectLimited(
      await post('/api/auth/register', { email: newEmail(), password: PASSWORD, firstName: 'A', lastName: 'B' }, ip),
    );

    const email = newEmail();
    const body = { email, password: PASSWORD, firstName: 'A', lastName: 'B' };
    expect((await post('/api/auth/register', body, newIp())).status).toBe(200);
    expect((await post('/api/auth/register', body, newIp())).status).toBe(409);
    expectLimited(await post('/api/auth/register', body, newIp()));

    await waitOut(retryAfter);
    expect((await post('/api/auth/register', { email: newEmail(), password: PASSWORD, firstName: 'A', lastName: 'B' }, ip)).status).toBe(
      200,
    );
  });
});

describe('external registration', () => {
  it('counts as a registration, so one provider token cannot probe e-mail addresses endlessly', async () => {
    const em = stack.orm.em.fork();
    const taken = [newEmail(), newEmail(), newEmail()];
    for (const email of taken) em.create(User, { email, firstName: 'Taken', lastName: 'Address', passwordHash: null });
    await em.flush();
    const token = await startExternalRegistration(em, {
      provider: 'test',
      subject: `probe-${Date.now()}`,
      email: null,
      emailVerified: false,
      firstName: 'Pro',
      lastName: 'Be',
    });
    const ip = newIp();
    for (const email of taken) expect((await post('/api/auth/external/register', { token, email }, ip)).status).toBe(409);
    const retryAfter = expectLimited(await post('/api/auth/external/register', { token, email: newEmail() }, ip));
    await waitOut(retryAfter);
    const registered = await post('/api/auth/external/register', { token, email: newEmail() }, ip);
    expect(registered.status, registered.text).toBe(200);
  });
});

describe('password reset request', () => {
  it('limits requests per e-mail address, whether it has an account or not, and per address', async () => {
    const user = await newUser();
    for (const email of [user.email, newEmail()]) {
      expect((await post('/api/auth/reset/request', { email }, newIp())).status).toBe(200);
      expect((await post('/api/auth/reset/request', { email }, newIp())).status).toBe(200);
      expectLimited(await post('/api/auth/reset/request', { email }, newIp()));
    }
    const ip = newIp();
    for (let attempt = 0; attempt < 3; attempt++)
      expect((await post('/api/auth/reset/request', { email: newEmail() }, ip)).status).toBe(200);
    const retryAfter = expectLimited(await post('/api/auth/reset/request', { email: newEmail() }, ip));
    await waitOut(retryAfter);
    expect((await post('/api/auth/reset/request', { email: newEmail() }, ip)).status).toBe(200);
  });
});

describe('verify submit', () => {
  it('limits token guesses per address and recovers', async () => {
    const ip = newIp();
    for (let attempt = 0; attempt < 3; attempt++) {
      expect((await post('/api/auth/verify/submit', { token: `guess-${attempt}-aaaaaaaaaaaaaaaaaaaa` }, ip)).status).toBe(400);
    }
    const retryAfter = expectLimited(await post('/api/auth/verify/submit', { token: 'guess-x-aaaaaaaaaaaaaaaaaaaa' }, ip));
    await waitOut(retryAfter);
    expect((await post('/api/auth/verify/submit', { token: 'guess-y-aaaaaaaaaaaaaaaaaaaa' }, ip)).status).toBe(400);
  });
});

describe('two-factor verify', () => {
  it('limits code guesses per account, from any address, and recovers', async () => {
    const user = await newUser();
    const setup = await post('/api/auth/2fa/enable/request', undefined, newIp(), user.token);
    expect(setup.status, setup.text).toBe(200);
    const secret = setup.body.secret as string;
    const now = () => Math.floor(Date.now() / 30_000);
    const enabled = await post(
      '/api/auth/2fa/enable/submit',
      { token: await generate({ secret, epoch: now() * 30 }) },
      newIp(),
      user.token,
    );
    expect(enabled.status, enabled.text).toBe(200);
    const usedStep = now();

    const pending = (await post('/api/auth/login', { email: user.email, password: PASSWORD }, newIp())).body.token as string;
    for (let attempt = 0; attempt < 3; attempt++) {
      const wrong = await post(
        '/api/auth/2fa/verify',
        { token: await generate({ secret, epoch: (now() + 10 + attempt) * 30 }) },
        newIp(),
        pending,
      );
      expect(wrong.status).toBe(401);
    }
    const nextStep = Math.max(now(), usedStep + 1);
    const right = await generate({ secret, epoch: nextStep * 30 });
    const retryAfter = expectLimited(await post('/api/auth/2fa/verify', { token: right }, newIp(), pending));
    await waitOut(retryAfter);
    // One step ahead is within the allowed drift, and newer than the code that turned 2FA on.
    const after = await post(
      '/api/auth/2fa/verify',
      { token: await generate({ secret, epoch: (Math.max(now(), usedStep) + 1) * 30 }) },
      newIp(),
      pending,
    );
    expect(after.status, after.text).toBe(200);
  });
});

describe('external sign-in’s browser steps', () => {
  it('limits /init and /redirect per address, whatever the provider', async () => {
    const ip = newIp();
    const get = (path: string) => stack.http.request('GET', path, { headers: { 'x-forwarded-for': ip } });
    expect((await get('/api/auth/external/nobody/init')).status).toBe(404);
    expect((await get('/api/auth/external/nobody/redirect?state=x')).status).toBe(404);
    expect((await get('/api/auth/external/other/init')).status).toBe(404);
    expectLimited(await get('/api/auth/external/nobody/redirect?state=x'));
    // Another address is not affected.
    expect((await stack.http.request('GET', '/api/auth/external/nobody/init', { headers: { 'x-forwarded-for': newIp() } })).status).toBe(
      404,
    );
  });
});
