import { generate } from 'otplib';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthSession, User } from '../../db/entities/index.ts';
import { startExternalLink, startExternalRegistration } from '../../server/auth/externalAccounts.ts';
import { PASSWORD, registerUser } from '../support/accounts.ts';
import { launchChromium } from '../support/chromium.ts';
import { linkFromMail } from '../support/smtp.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * The links the service hands out (mails, OpenID Connect redirects) open pages it serves itself,
 * driven here in a real Chromium as a user would.
 */

let stack: TestStack;
let browser: Browser;
beforeAll(async () => {
  stack = await startTestStack();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

async function openInBrowser(url: string, cookies: { token?: string } = {}) {
  const context = await browser.newContext();
  if (cookies.token) await context.addCookies([{ name: 'token', value: cookies.token, url: stack.url }]);
  const page = await context.newPage();
  await page.goto(url);
  return page;
}

/** A link flow of `user`'s session that came back with `subject`, waiting at /auth/external-link/<token>. */
async function pendingLink(user: { id: string; token: string }, subject: string, returnTo: string) {
  const em = stack.orm.em.fork();
  const { sid } = JSON.parse(Buffer.from(user.token.split('.')[1] ?? '', 'base64url').toString()) as { sid: string };
  const profile = { provider: 'test', subject, email: `${subject}@idp.test`, emailVerified: true, firstName: 'Grace', lastName: 'Hopper' };
  return startExternalLink(em, { user: em.getReference(User, user.id), session: em.getReference(AuthSession, sid), profile, returnTo });
}

async function linkedIdentities(subject: string) {
  const rows = await stack.orm.em.fork().getConnection().execute('select user_id from external_identities where subject = ?', [subject]);
  return rows.map((row) => String(row.user_id));
}

describe('pages behind the service’s own links', () => {
  it('a newcomer confirms the e-mail address by opening the mailed link and pressing the button', async () => {
    const user = await registerUser(stack, { verify: false });
    const mail = await stack.smtp.waitFor((m) => m.to.includes(user.email) && /verify/i.test(m.subject));
    const link = linkFromMail(mail);
    expect(link.startsWith(`${stack.url}/auth/verify?token=`)).toBe(true);
    const page = await openInBrowser(link);
    expect(await page.title()).toBe('Confirm your e-mail address');
    await page.getByRole('button', { name: 'Confirm my e-mail address' }).click();
    await expect.poll(() => page.locator('#result').textContent()).toBe('Your e-mail address is confirmed.');
    const me = await stack.http.get('/api/auth', { token: user.token });
    expect(me.body.user.emailVerified).toBe(true);
    // Opened again, the used token is refused with the API's message.
    const again = await openInBrowser(link);
    await again.getByRole('button').click();
    await expect.poll(() => again.locator('#result').textContent()).toMatch(/invalid|used|expired/i);
    await page.context().close();
    await again.context().close();
  });

  it('a user who forgot the password sets a new one through the mailed link', async () => {
    const user = await registerUser(stack);
    await stack.http.post('/api/auth/reset/request', { email: user.email });
    const mail = await stack.smtp.waitFor((m) => m.to.includes(user.email) && /password/i.test(m.subject));
    const page = await openInBrowser(linkFromMail(mail));
    await page.getByLabel('New password').fill('a brand new password');
    await page.getByLabel('Repeat it').fill('a brand new password');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await expect.poll(() => page.locator('#result').textContent()).toMatch(/password is changed/);
    expect((await stack.http.post('/api/auth/login', { email: user.email, password: 'a brand new password' })).status).toBe(200);
    expect((await stack.http.post('/api/auth/login', { email: user.email, password: PASSWORD })).status).toBe(401);
    await page.context().close();
  });

  it('a user with two-factor sign-in enters a code on the page and lands on returnUrl, never another origin', async () => {
    const user = await registerUser(stack);
    const setup = await stack.http.post('/api/auth/2fa/enable/request', undefined, { token: user.token });
    const enabled = await stack.http.post(
      '/api/auth/2fa/enable/submit',
      { token: await generate({ secret: setup.body.secret }) },
      { token: user.token },
    );
    expect(enabled.status, enabled.text).toBe(200);
    const [first, second] = enabled.body.recoveryCodes as string[];
    for (const [returnUrl, landing] of [
      ['/api/auth', `${stack.url}/api/auth`],
      ['https://evil.example/steal', `${stack.url}/`],
    ] as const) {
      const pending = await stack.http.post('/api/auth/login', { email: user.email, password: PASSWORD });
      expect(pending.body.status).toBe('2fa_required');
      const page = await openInBrowser(`${stack.url}/auth/2fa?returnUrl=${encodeURIComponent(returnUrl)}`, { token: pending.body.token });
      await page.getByLabel(/Code from your authenticator app/).fill((landing.endsWith('/api/auth') ? first : second) as string);
      await Promise.all([page.waitForURL(landing), page.getByRole('button', { name: 'Sign in' }).click()]);
      if (returnUrl === '/api/auth') expect(JSON.parse((await page.locator('body').textContent()) ?? '{}').status).toBe('ok');
      await page.context().close();
    }
  });

  it('someone new from a sign-in provider checks the prefilled details and creates the account', async () => {
    const token = await startExternalRegistration(stack.orm.em.fork(), {
      provider: 'test',
      subject: `page-${Date.now()}`,
      email: `provider-${Date.now()}@example.test`,
      emailVerified: true,
      firstName: 'Grace',
      lastName: null,
    });
    const page = await openInBrowser(`${stack.url}/auth/external-register/${token}`);
    await expect.poll(() => page.getByLabel('First name').inputValue()).toBe('Grace');
    await page.getByLabel('Last name').fill('Hopper');
    await page.getByRole('button', { name: 'Create the account' }).click();
    await expect.poll(() => page.locator('#result').textContent()).toBe('Your account is created and you are signed in.');
    const cookie = (await page.context().cookies()).find((c) => c.name === 'token');
    const me = await stack.http.get('/api/auth', { token: cookie?.value });
    expect(me.body.user).toMatchObject({ firstName: 'Grace', lastName: 'Hopper', emailVerified: true });
    await page.context().close();
  });

  it('a signed-in user checks the provider account on the confirmation page, presses Link and lands on returnUrl', async () => {
    const user = await registerUser(stack);
    const subject = `page-link-${Date.now()}`;
    const token = await pendingLink(user, subject, '/api/auth');
    const page = await openInBrowser(`${stack.url}/auth/external-link/${token}`, { token: user.token });
    expect(await page.title()).toBe('Link a sign-in provider');
    await expect.poll(() => page.locator('[data-field="identity"]').textContent()).toBe(`Grace Hopper, ${subject}@idp.test`);
    expect(await page.locator('[data-field="provider"]').textContent()).toBe('test');
    expect(await page.locator('[data-field="account"]').textContent()).toBe(`Ada Lovelace, ${user.email}`);
    expect(await linkedIdentities(subject)).toEqual([]);
    await Promise.all([page.waitForURL(`${stack.url}/api/auth`), page.getByRole('button', { name: 'Link', exact: true }).click()]);
    expect(await linkedIdentities(subject)).toEqual([user.id]);
    await page.context().close();
  });

  it('a user who did not start the link presses Cancel, and nothing is linked', async () => {
    const user = await registerUser(stack);
    const subject = `page-cancel-${Date.now()}`;
    const token = await pendingLink(user, subject, '/api/auth');
    const page = await openInBrowser(`${stack.url}/auth/external-link/${token}`, { token: user.token });
    await expect.poll(() => page.locator('[data-field="identity"]').textContent()).toContain(subject);
    await Promise.all([page.waitForURL(`${stack.url}/api/auth`), page.getByRole('button', { name: 'Cancel' }).click()]);
    expect(await linkedIdentities(subject)).toEqual([]);
    expect((await stack.http.post('/api/auth/external/link/confirm', { token }, { cookie: `token=${user.token}` })).body.code).toBe(
      'invalid_token',
    );
    await page.context().close();
  });

  it('shows another account nothing of a link and offers it no button', async () => {
    const user = await registerUser(stack);
    const other = await registerUser(stack);
    const subject = `page-other-${Date.now()}`;
    const token = await pendingLink(user, subject, '/');
    const page = await openInBrowser(`${stack.url}/auth/external-link/${token}`, { token: other.token });
    await expect.poll(() => page.locator('#result').textContent()).toMatch(/another session/);
    expect(await page.getByRole('button', { name: 'Link', exact: true }).isVisible()).toBe(false);
    expect(await page.content()).not.toContain(subject);
    await page.context().close();
  });

  it('serves the pages without inline scripts, third-party resources or a Referer', async () => {
    for (const path of ['/auth/verify?token=x', '/auth/reset?token=x', '/auth/2fa', '/auth/external-register/x', '/auth/external-link/x']) {
      const response = await fetch(`${stack.url}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(response.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(await response.text()).not.toMatch(/<script>|https?:\/\//);
    }
  });
});
