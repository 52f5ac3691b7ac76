import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../server/infra/ports.ts';
import { createApiKey, PASSWORD, registerUser } from '../support/accounts.ts';
import { Browser } from '../support/browser.ts';
import { authorizeAtProvider, completeAtApp, startOidcProvider } from '../support/oidcProvider.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * OpenID Connect sign-in against a real provider (oidc-provider) on loopback: the whole
 * authorization-code + PKCE flow through our /init and /redirect routes, with the provider's
 * own login and consent forms submitted like a browser would.
 */

const PROVIDER = 'testidp';
let stack: TestStack;
let idp: Awaited<ReturnType<typeof startOidcProvider>>;
let appUrl: string;
/** Every log line the app writes, to check what reaches the logs. */
const logLines: string[] = [];

beforeAll(async () => {
  // The provider must know our redirect URI before the app starts, so the app's port is chosen first.
  const port = await freePort();
  appUrl = `http://127.0.0.1:${port}`;
  idp = await startOidcProvider({ redirectUris: [`${appUrl}/api/auth/external/${PROVIDER}/redirect`] });
  stack = await startTestStack(
    {
      PORT: String(port),
      PUBLIC_URL: appUrl,
      OIDC_PROVIDERS: JSON.stringify([{ name: PROVIDER, issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret }]),
      OIDC_ALLOW_INSECURE_REQUESTS: 'true',
      LOG_LEVEL: 'info',
    },
    { logDestination: { write: (line: string) => void logLines.push(line) } },
  );
});
afterAll(async () => {
  await stack?.close();
  await idp?.close();
});

/** A fresh browser signed in to our app with `token`, or signed out. */
function browserWith(token?: string) {
  const browser = new Browser();
  if (token) browser.setCookie('token', token, '127.0.0.1', '/');
  return browser;
}

async function signInWithProvider(browser: Browser, accountId: string, initQuery?: string) {
  const callback = await authorizeAtProvider(browser, { appUrl, issuer: idp.issuer, provider: PROVIDER, accountId, initQuery });
  return completeAtApp(browser, appUrl, callback);
}

function registrationToken(landedOn: URL | undefined) {
  const match = /^\/auth\/external-register\/([\w-]+)$/.exec(landedOn?.pathname ?? '');
  if (!match?.[1]) throw new Error(`not sent to the registration page: ${landedOn}`);
  return match[1];
}

function linkToken(landedOn: URL | undefined) {
  const match = /^\/auth\/external-link\/([\w-]+)$/.exec(landedOn?.pathname ?? '');
  if (!match?.[1]) throw new Error(`not sent to the link confirmation page: ${landedOn}`);
  return match[1];
}

/** What the confirmation page's script sends: JSON, with the browser's session cookie. */
const asSession = (sessionToken: string) => ({ cookie: `token=${sessionToken}` });

/** A signed-in user links the provider account: the flow, then Link on the confirmation page. */
async function linkWithProvider(sessionToken: string, accountId: string, initQuery?: string) {
  const token = linkToken((await signInWithProvider(browserWith(sessionToken), accountId, initQuery)).landedOn);
  const confirmed = await stack.http.post('/api/auth/external/link/confirm', { token }, asSession(sessionToken));
  expect(confirmed.status, confirmed.text).toBe(200);
  return confirmed.body as { status: 'ok'; provider: string; returnUrl: string };
}

async function identityRows(subject: string) {
  const rows = await stack.orm.em
    .fork()
    .getConnection()
    .execute('select count(*)::int as n from external_identities where subject = ?', [subject]);
  return rows[0]?.n as number;
}

describe('external providers', () => {
  it('lists the configured providers; an unknown one is 404', async () => {
    const listed = await stack.http.get('/api/auth/external/providers');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([PROVIDER]);
    const unknown = await stack.http.get('/api/auth/external/nope/init');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('unknown_provider');
  });

  it('sends /init to the provider with PKCE S256, state and nonce kept in HttpOnly cookies', async () => {
    const response = await fetch(`${appUrl}/api/auth/external/${PROVIDER}/init`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location') ?? '');
    expect(location.origin).toBe(idp.issuer);
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
    expect(location.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(location.searchParams.get('redirect_uri')).toBe(`${appUrl}/api/auth/external/${PROVIDER}/redirect`);
    const cookies = response.headers.getSetCookie();
    const state = cookies.find((cookie) => cookie.startsWith('oidc_state='));
    expect(state).toContain(`oidc_state=${location.searchParams.get('state')}`);
    for (const name of ['oidc_state', 'oidc_nonce', 'oidc_verifier', 'oidc_intent']) {
      const cookie = cookies.find((candidate) => candidate.startsWith(`${name}=`));
      expect(cookie).toMatch(/HttpOnly/i);
      expect(cookie).toContain(`Path=/api/auth/external/${PROVIDER}/redirect`);
    }
    // The verifier itself never leaves the cookie.
    const verifier = cookies
      .find((cookie) => cookie.startsWith('oidc_verifier='))
      ?.split(';')[0]
      ?.split('=')[1];
    expect(location.href).not.toContain(verifier);
  });

  it('registers an unknown identity through /auth/external-register/<token>, then signs it in', async () => {
    idp.accounts.set('alice-sub', { email: 'Alice@Idp.test', email_verified: true, given_name: 'Alice', family_name: 'Liddell' });
    const { landedOn } = await signInWithProvider(browserWith(), 'alice-sub');
    const token = registrationToken(landedOn);

    const details = await stack.http.get(`/api/auth/external/register/${token}`);
    expect(details.status, details.text).toBe(200);
    expect(details.body).toMatchObject({
      provider: PROVIDER,
      email: 'alice@idp.test',
      emailVerified: true,
      firstName: 'Alice',
      lastName: 'Liddell',
    });

    const registered = await stack.http.post('/api/auth/external/register', { token });
    expect(registered.status, registered.text).toBe(200);
    expect(registered.body.status).toBe('ok');
    expect(registered.headers.getSetCookie().some((cookie) => cookie.startsWith('token='))).toBe(true);
    const me = await stack.http.get('/api/auth', { token: registered.body.token });
    expect(me.body.user).toMatchObject({ email: 'alice@idp.test', firstName: 'Alice', lastName: 'Liddell', emailVerified: true });
    const linked = await stack.http.get(`/api/auth/external/${PROVIDER}`, { token: registered.body.token });
    expect(linked.body).toMatchObject({ provider: PROVIDER, linked: true, subject: 'alice-sub', email: 'alice@idp.test' });

    // Single use.
    const again = await stack.http.post('/api/auth/external/register', { token });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('invalid_token');

    // Next time the same identity signs straight in, and lands on returnUrl.
    const browser = browserWith();
    const login = await signInWithProvider(browser, 'alice-sub', 'returnUrl=%2Fprojects%3Ftab%3D1');
    expect(login.landedOn?.href).toBe(`${appUrl}/projects?tab=1`);
    const cookie = browser.cookie('token');
    expect(cookie).toBeDefined();
    const session = await stack.http.get('/api/auth', { cookie: `token=${cookie?.value}` });
    expect(session.body.status).toBe('ok');
    expect(session.body.user.email).toBe('alice@idp.test');
  });

  it('keeps the registration token out of the request logs', async () => {
    idp.accounts.set('logged-sub', { email: 'logged@idp.test', email_verified: true, given_name: 'Log', family_name: 'Ged' });
    const token = registrationToken((await signInWithProvider(browserWith(), 'logged-sub')).landedOn);
    expect((await fetch(`${appUrl}/auth/external-register/${token}`)).status).toBe(200);
    expect((await stack.http.get(`/api/auth/external/register/${token}`)).status).toBe(200);
    const input = encodeURIComponent(JSON.stringify({ token }));
    expect((await stack.http.get(`/trpc/externalAuth.registration?input=${input}`)).status).toBe(200);
    const logged = logLines.join('');
    expect(logged).toContain('/auth/external-register/[redacted]');
    expect(logged).toContain('/api/auth/external/register/[redacted]');
    expect(logged).not.toContain(token);
    // Nor is it in the database: the row holds its SHA-256.
    const rows = await stack.orm.em.fork().getConnection().execute(`select * from external_registrations where subject = 'logged-sub'`);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(rows[0]?.token_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses a registration token once its 15 minutes have passed', async () => {
    idp.accounts.set('late-sub', { email: 'late@idp.test', email_verified: true, given_name: 'Late', family_name: 'Comer' });
    const token = registrationToken((await signInWithProvider(browserWith(), 'late-sub')).landedOn);
    await stack.orm.em
      .fork()
      .getConnection()
      .execute(`update external_registrations set expires_at = now() - interval '1 second' where subject = 'late-sub'`);
    for (const response of [
      await stack.http.get(`/api/auth/external/register/${token}`),
      await stack.http.post('/api/auth/external/register', { token }),
    ]) {
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ status: 'error', code: 'invalid_token' });
    }
  });

  it('counts a provider e-mail as verified only when the provider says email_verified', async () => {
    idp.accounts.set('bob-sub', { email: 'bob@idp.test', email_verified: false, name: 'Bob Builder' });
    const { landedOn } = await signInWithProvider(browserWith(), 'bob-sub');
    const token = registrationToken(landedOn);
    const registered = await stack.http.post('/api/auth/external/register', { token });
    expect(registered.status, registered.text).toBe(200);
    expect(registered.body.status).toBe('email_not_verified');
    const me = await stack.http.get('/api/auth', { token: registered.body.token });
    expect(me.body.user).toMatchObject({ email: 'bob@idp.test', firstName: 'Bob', lastName: 'Builder', emailVerified: false });
    await stack.smtp.waitFor((mail) => mail.to.includes('bob@idp.test') && /verify/i.test(mail.subject));

    // A provider that sends no e-mail: the form supplies one, unverified.
    idp.accounts.set('nomail-sub', { given_name: 'No', family_name: 'Mail' });
    const second = registrationToken((await signInWithProvider(browserWith(), 'nomail-sub')).landedOn);
    const missing = await stack.http.post('/api/auth/external/register', { token: second });
    expect(missing.status).toBe(400);
    expect(missing.body.issues?.[0]?.path).toEqual(['email']);
    const withEmail = await stack.http.post('/api/auth/external/register', { token: second, email: 'nomail@example.test' });
    expect(withEmail.status, withEmail.text).toBe(200);
    expect(withEmail.body.status).toBe('email_not_verified');
  });

  it('refuses to register an address that has an account (409); the token stays usable', async () => {
    const existing = await registerUser(stack);
    idp.accounts.set('clash-sub', { email: existing.email, email_verified: true, given_name: 'Clash', family_name: 'Test' });
    const token = registrationToken((await signInWithProvider(browserWith(), 'clash-sub')).landedOn);
    const refused = await stack.http.post('/api/auth/external/register', { token });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('email_taken');
    const other = await stack.http.post('/api/auth/external/register', { token, email: 'clash-other@example.test' });
    expect(other.status, other.text).toBe(200);
  });

  it('two registrations racing for one address: one account, and the loser keeps a usable token', async () => {
    const email = 'race-register@example.test';
    const tokens: string[] = [];
    for (const sub of ['race-reg-1', 'race-reg-2', 'race-reg-3']) {
      idp.accounts.set(sub, { given_name: 'Race', family_name: sub });
      tokens.push(registrationToken((await signInWithProvider(browserWith(), sub)).landedOn));
    }
    const answers = await Promise.all(tokens.map((token) => stack.http.post('/api/auth/external/register', { token, email })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409, 409]);
    // Whatever moment the loser lost at, its token was not used up.
    for (const [index, answer] of answers.entries()) {
      if (answer.status !== 409) continue;
      expect(answer.body.code).toBe('email_taken');
      const retried = await stack.http.post('/api/auth/external/register', { token: tokens[index], email: `race-${index}@example.test` });
      expect(retried.status, retried.text).toBe(200);
    }
  });

  it('links an identity to the signed-in user once confirmed; one identity cannot be linked to two users', async () => {
    const carol = await registerUser(stack);
    idp.accounts.set('carol-sub', { email: carol.email, email_verified: true, given_name: 'Carol', family_name: 'C' });
    const linking = await linkWithProvider(carol.token, 'carol-sub', 'returnUrl=/settings');
    expect(linking).toEqual({ status: 'ok', provider: PROVIDER, returnUrl: '/settings' });
    const linked = await stack.http.get(`/api/auth/external/${PROVIDER}`, { token: carol.token });
    expect(linked.body).toMatchObject({ linked: true, subject: 'carol-sub' });

    // Signing in with it now opens Carol's account.
    const browser = browserWith();
    await signInWithProvider(browser, 'carol-sub');
    const me = await stack.http.get('/api/auth', { cookie: `token=${browser.cookie('token')?.value}` });
    expect(me.body.user.id).toBe(carol.id);

    // Dave cannot take Carol's identity.
    const dave = await registerUser(stack);
    const stolen = await signInWithProvider(browserWith(dave.token), 'carol-sub');
    expect(stolen.response.status).toBe(409);
    expect(stolen.response.text).toContain('identity_linked_elsewhere');
    expect((await stack.http.get(`/api/auth/external/${PROVIDER}`, { token: dave.token })).body.linked).toBe(false);

    // Carol cannot link a second identity of the same provider.
    idp.accounts.set('carol-2', { email: 'carol2@idp.test', email_verified: true });
    const second = await signInWithProvider(browserWith(carol.token), 'carol-2');
    expect(second.response.status).toBe(409);
    expect(second.response.text).toContain('provider_already_linked');
  });

  it('never links a flow started signed out, even when the browser is signed in by the time it comes back', async () => {
    // Login CSRF at the provider: the victim's browser finishes a flow with the attacker's identity.
    const victim = await registerUser(stack);
    idp.accounts.set('mallory-sub', { email: 'mallory@idp.test', email_verified: true, given_name: 'Mallory', family_name: 'M' });
    const browser = browserWith();
    const callback = await authorizeAtProvider(browser, { appUrl, issuer: idp.issuer, provider: PROVIDER, accountId: 'mallory-sub' });
    browser.setCookie('token', victim.token, '127.0.0.1', '/');
    const completed = await completeAtApp(browser, appUrl, callback);
    // Treated as the sign-in it was started as: an unknown identity goes to registration.
    registrationToken(completed.landedOn);
    expect((await stack.http.get(`/api/auth/external/${PROVIDER}`, { token: victim.token })).body.linked).toBe(false);
    const rows = await stack.orm.em
      .fork()
      .getConnection()
      .execute(`select count(*)::int as n from external_identities where subject = 'mallory-sub'`);
    expect(rows[0]?.n).toBe(0);
  });

  it('refuses (400) a link flow completed by another session or signed out, and links nothing', async () => {
    const alice = await registerUser(stack);
    const bob = await registerUser(stack);
    idp.accounts.set('switch-sub', { email: 'switch@idp.test', email_verified: true });
    const isLinked = async (token: string) => (await stack.http.get(`/api/auth/external/${PROVIDER}`, { token })).body.linked;

    // Started by Alice, completed with Bob's cookie.
    const browser = browserWith(alice.token);
    const callback = await authorizeAtProvider(browser, { appUrl, issuer: idp.issuer, provider: PROVIDER, accountId: 'switch-sub' });
    browser.setCookie('token', bob.token, '127.0.0.1', '/');
    const switched = await completeAtApp(browser, appUrl, callback);
    expect(switched.response.status).toBe(400);
    expect(JSON.parse(switched.response.text)).toMatchObject({ status: 'error', code: 'external_flow_mismatch' });
    expect(await isLinked(alice.token)).toBe(false);
    expect(await isLinked(bob.token)).toBe(false);
    // One try per flow: the refusal used it up, so going back to Alice's cookie does not help.
    browser.setCookie('token', alice.token, '127.0.0.1', '/');
    const retried = await completeAtApp(browser, appUrl, callback);
    expect(retried.response.status).toBe(400);
    expect(retried.response.text).toContain('no_external_sign_in');
    expect(await isLinked(alice.token)).toBe(false);

    // Started by Alice, completed by another session of Alice: the binding is to the session.
    const secondSession = await stack.http.post('/api/auth/login', { email: alice.email, password: PASSWORD });
    expect(secondSession.status, secondSession.text).toBe(200);
    const other = browserWith(alice.token);
    const otherCallback = await authorizeAtProvider(other, { appUrl, issuer: idp.issuer, provider: PROVIDER, accountId: 'switch-sub' });
    other.setCookie('token', secondSession.body.token, '127.0.0.1', '/');
    const otherSession = await completeAtApp(other, appUrl, otherCallback);
    expect(otherSession.response.status).toBe(400);
    expect(otherSession.response.text).toContain('external_flow_mismatch');

    // Started by Alice, completed signed out: refused too, neither signed in nor sent to registration.
    const signedOut = browserWith(alice.token);
    const signedOutCallback = await authorizeAtProvider(signedOut, {
      appUrl,
      issuer: idp.issuer,
      provider: PROVIDER,
      accountId: 'switch-sub',
    });
    signedOut.cookies = signedOut.cookies.filter((cookie) => cookie.name !== 'token');
    const anonymous = await completeAtApp(signedOut, appUrl, signedOutCallback);
    expect(anonymous.response.status).toBe(400);
    expect(anonymous.response.text).toContain('external_flow_mismatch');
    expect(signedOut.cookie('token')).toBeUndefined();

    const rows = await stack.orm.em
      .fork()
      .getConnection()
      .execute(`select count(*)::int as n from external_identities where subject = 'switch-sub'`);
    expect(rows[0]?.n).toBe(0);

    // The same flow completed by the session that started it asks to confirm, and links then.
    const linking = await linkWithProvider(alice.token, 'switch-sub', 'returnUrl=/settings');
    expect(linking.returnUrl).toBe('/settings');
    expect(await isLinked(alice.token)).toBe(true);
  });

  it('a signed-in user who starts a link sees what would be linked, and nothing is linked until they confirm', async () => {
    const user = await registerUser(stack);
    idp.accounts.set('confirm-sub', { email: 'Confirm@Idp.test', email_verified: true, given_name: 'Con', family_name: 'Firm' });
    const browser = browserWith(user.token);
    const { landedOn } = await signInWithProvider(browser, 'confirm-sub', 'returnUrl=%2Fsettings%3Ftab%3Dproviders');
    const token = linkToken(landedOn);

    // The page the flow lands on, and what its script reads and shows.
    const page = await browser.request(landedOn as URL);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<title>Link a sign-in provider</title>');
    const details = await stack.http.get(`/api/auth/external/link/${token}`, asSession(user.token));
    expect(details.status, details.text).toBe(200);
    expect(details.body).toMatchObject({
      provider: PROVIDER,
      subject: 'confirm-sub',
      email: 'confirm@idp.test',
      emailVerified: true,
      firstName: 'Con',
      lastName: 'Firm',
      account: { email: user.email, firstName: 'Ada', lastName: 'Lovelace' },
      returnUrl: '/settings?tab=providers',
    });
    // Neither the flow nor reading what it brought linked anything.
    expect((await stack.http.get(`/api/auth/external/${PROVIDER}`, { token: user.token })).body.linked).toBe(false);
    expect(await identityRows('confirm-sub')).toBe(0);

    const confirmed = await stack.http.post('/api/auth/external/link/confirm', { token }, asSession(user.token));
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body).toEqual({ status: 'ok', provider: PROVIDER, returnUrl: '/settings?tab=providers' });
    const linked = await stack.http.get(`/api/auth/external/${PROVIDER}`, { token: user.token });
    expect(linked.body).toMatchObject({ linked: true, subject: 'confirm-sub', email: 'confirm@idp.test' });

    // Single use: it can be neither confirmed nor read again.
    for (const again of [
      await stack.http.post('/api/auth/external/link/confirm', { token }, asSession(user.token)),
      await stack.http.get(`/api/auth/external/link/${token}`, asSession(user.token)),
    ]) {
      expect(again.status).toBe(400);
      expect(again.body).toMatchObject({ status: 'error', code: 'invalid_token' });
    }
    // The token is in no log line, and the database holds its SHA-256 only.
    const logged = logLines.join('');
    expect(logged).toContain('/auth/external-link/[redacted]');
    expect(logged).toContain('/api/auth/external/link/[redacted]');
    expect(logged).toContain('/api/auth/external/link/confirm');
    expect(logged).not.toContain(token);
    const rows = await stack.orm.em.fork().getConnection().execute(`select * from external_link_requests where subject = 'confirm-sub'`);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(rows[0]?.token_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a link forced on a signed-in browser can be confirmed by the session that started it only', async () => {
    // Another site sent the victim's signed-in browser to /init, and the provider signed it in
    // silently as the attacker: the flow is the victim session's own, so it reaches the page.
    const victim = await registerUser(stack);
    const attacker = await registerUser(stack);
    idp.accounts.set('forced-sub', { email: 'forced@idp.test', email_verified: true, given_name: 'Mallory', family_name: 'M' });
    const token = linkToken((await signInWithProvider(browserWith(victim.token), 'forced-sub')).landedOn);
    expect(await identityRows('forced-sub')).toBe(0);

    const confirm = '/api/auth/external/link/confirm';
    const secondSession = await stack.http.post('/api/auth/login', { email: victim.email, password: PASSWORD });
    expect(secondSession.status, secondSession.text).toBe(200);
    const apiKey = await createApiKey(stack, victim.token, { accessType: 'full' });
    const refusals: [Awaited<ReturnType<typeof stack.http.get>>, number, string?][] = [
      // Holding the token is not enough: another user's session, another session of the victim.
      [await stack.http.post(confirm, { token }, asSession(attacker.token)), 400, 'external_flow_mismatch'],
      [await stack.http.post(confirm, { token }, { token: attacker.token }), 400, 'external_flow_mismatch'],
      [await stack.http.get(`/api/auth/external/link/${token}`, asSession(attacker.token)), 400, 'external_flow_mismatch'],
      [await stack.http.post(confirm, { token }, asSession(secondSession.body.token)), 400, 'external_flow_mismatch'],
      // Signed out, or with the victim's API key.
      [await stack.http.post(confirm, { token }), 401, 'unauthenticated'],
      [await stack.http.post(confirm, { token }, { apiKey: apiKey.secret }), 403, 'forbidden'],
      // What a cross-site form can send (form fields, text/plain) is refused even with the cookie;
      // JSON needs a CORS preflight no other origin passes, and SameSite=Lax keeps the cookie off
      // cross-site POSTs anyway.
      [
        await stack.http.request('POST', confirm, {
          rawBody: new URLSearchParams({ token }).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          as: asSession(victim.token),
        }),
        415,
      ],
      [
        await stack.http.request('POST', confirm, {
          rawBody: JSON.stringify({ token }),
          headers: { 'content-type': 'text/plain' },
          as: asSession(victim.token),
        }),
        415,
      ],
    ];
    for (const [response, status, code] of refusals) {
      expect(response.status, response.text).toBe(status);
      expect(response.body).toMatchObject({ status: 'error', ...(code ? { code } : {}) });
    }
    expect(await identityRows('forced-sub')).toBe(0);
    expect((await stack.http.get(`/api/auth/external/${PROVIDER}`, { token: attacker.token })).body.linked).toBe(false);
    // The refusals did not use the token up: the victim still sees what was forced on them.
    const shown = await stack.http.get(`/api/auth/external/link/${token}`, asSession(victim.token));
    expect(shown.status, shown.text).toBe(200);
    expect(shown.body).toMatchObject({ email: 'forced@idp.test', account: { email: victim.email } });
  });

  it('a user who cancels on the confirmation page links nothing, and the link cannot be confirmed after', async () => {
    const user = await registerUser(stack);
    idp.accounts.set('cancel-sub', { email: 'cancel@idp.test', email_verified: true });
    const token = linkToken((await signInWithProvider(browserWith(user.token), 'cancel-sub', 'returnUrl=/settings')).landedOn);
    const cancelled = await stack.http.post('/api/auth/external/link/cancel', { token }, asSession(user.token));
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body).toEqual({ status: 'ok', returnUrl: '/settings' });
    for (const path of ['/api/auth/external/link/confirm', '/api/auth/external/link/cancel']) {
      const again = await stack.http.post(path, { token }, asSession(user.token));
      expect(again.status).toBe(400);
      expect(again.body.code).toBe('invalid_token');
    }
    expect(await identityRows('cancel-sub')).toBe(0);
    expect((await stack.http.get(`/api/auth/external/${PROVIDER}`, { token: user.token })).body.linked).toBe(false);
  });

  it('a link waiting for confirmation expires after 10 minutes, and ends with the session that started it', async () => {
    const user = await registerUser(stack);
    idp.accounts.set('late-link-sub', { email: 'late-link@idp.test', email_verified: true });
    const connection = stack.orm.em.fork().getConnection();
    const token = linkToken((await signInWithProvider(browserWith(user.token), 'late-link-sub')).landedOn);
    const [row] = await connection.execute(
      `select extract(epoch from expires_at - created)::int as seconds from external_link_requests where subject = 'late-link-sub'`,
    );
    expect(row?.seconds).toBe(600);
    await connection.execute(`update external_link_requests set expires_at = now() - interval '1 second' where subject = 'late-link-sub'`);
    const late = await stack.http.post('/api/auth/external/link/confirm', { token }, asSession(user.token));
    expect(late.status).toBe(400);
    expect(late.body).toMatchObject({ status: 'error', code: 'invalid_token' });

    // Signing out ends the pending link with the session: signed in again, it is gone.
    const pending = linkToken((await signInWithProvider(browserWith(user.token), 'late-link-sub')).landedOn);
    expect((await stack.http.get('/api/auth/logout', asSession(user.token))).status).toBe(200);
    const again = await stack.http.post('/api/auth/login', { email: user.email, password: PASSWORD });
    const afterLogout = await stack.http.post('/api/auth/external/link/confirm', { token: pending }, asSession(again.body.token));
    expect(afterLogout.status).toBe(400);
    expect(afterLogout.body.code).toBe('invalid_token');
    expect(await identityRows('late-link-sub')).toBe(0);
  });

  it('links one identity for one user only when several link it at once: 409s, never a 500', async () => {
    idp.accounts.set('race-sub', { email: 'race@idp.test', email_verified: true });
    const users = await Promise.all(Array.from({ length: 6 }, () => registerUser(stack)));
    const flows = await Promise.all(
      users.map(async (user) => {
        const browser = browserWith(user.token);
        const callback = await authorizeAtProvider(browser, { appUrl, issuer: idp.issuer, provider: PROVIDER, accountId: 'race-sub' });
        return { browser, callback };
      }),
    );
    // Nothing is linked yet, so every flow reaches its confirmation page.
    const tokens = await Promise.all(
      flows.map(async ({ browser, callback }) => linkToken((await completeAtApp(browser, appUrl, callback)).landedOn)),
    );
    // The confirmations arrive together: every one may pass the "linked already?" check before any inserts.
    const results = await Promise.all(
      tokens.map((token, index) => stack.http.post('/api/auth/external/link/confirm', { token }, asSession(users[index]?.token ?? ''))),
    );
    const statuses = results.map((result) => result.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(users.length - 1);
    for (const result of results.filter((r) => r.status === 409)) {
      expect(result.body).toMatchObject({ status: 'error', code: 'identity_linked_elsewhere' });
    }
    expect(await identityRows('race-sub')).toBe(1);
  });

  it('unlinks, but never the last way to sign in', async () => {
    // Carol-like user with a password: unlinking is fine.
    const user = await registerUser(stack);
    idp.accounts.set('unlink-sub', { email: user.email, email_verified: true });
    await linkWithProvider(user.token, 'unlink-sub');
    const unlinked = await stack.http.delete(`/api/auth/external/${PROVIDER}`, { token: user.token });
    expect(unlinked.status, unlinked.text).toBe(200);
    expect((await stack.http.get(`/api/auth/external/${PROVIDER}`, { token: user.token })).body.linked).toBe(false);
    expect((await stack.http.delete(`/api/auth/external/${PROVIDER}`, { token: user.token })).status).toBe(404);

    // An account made through the provider has no password: its identity is its only way in.
    idp.accounts.set('only-sub', { email: 'only@idp.test', email_verified: true, given_name: 'Only', family_name: 'Way' });
    const token = registrationToken((await signInWithProvider(browserWith(), 'only-sub')).landedOn);
    const registered = await stack.http.post('/api/auth/external/register', { token });
    const session = registered.body.token as string;
    const refused = await stack.http.delete(`/api/auth/external/${PROVIDER}`, { token: session });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('last_sign_in_method');

    // With a password set, it can go.
    const password = await stack.http.post('/api/auth/password', { password: PASSWORD, confirmPassword: PASSWORD }, { token: session });
    expect(password.status, password.text).toBe(200);
    expect((await stack.http.delete(`/api/auth/external/${PROVIDER}`, { token: session })).status).toBe(200);
    const login = await stack.http.post('/api/auth/login', { email: 'only@idp.test', password: PASSWORD });
    expect(login.status).toBe(200);
  });

  it('refuses a tampered state, and the flow cannot be retried after', async () => {
    idp.accounts.set('tamper-sub', { email: 'tamper@idp.test', email_verified: true });
    const browser = browserWith();
    const callback = await authorizeAtProvider(browser, { appUrl, issuer: idp.issuer, provider: PROVIDER, accountId: 'tamper-sub' });
    const tampered = new URL(callback);
    tampered.searchParams.set('state', `${callback.searchParams.get('state')}x`);
    const refused = await completeAtApp(browser, appUrl, tampered);
    expect(refused.response.status).toBe(400);
    expect(refused.response.text).toContain('invalid_state');
    // The flow cookies died with the first try.
    const retried = await completeAtApp(browser, appUrl, callback);
    expect(retried.response.status).toBe(400);
    expect(retried.response.text).toContain('no_external_sign_in');
    expect(browser.cookie('token')).toBeUndefined();
  });

  it('refuses a tampered PKCE verifier or nonce (the provider or the ID token check says no)', async () => {
    idp.accounts.set('verifier-sub', { email: 'verifier@idp.test', email_verified: true });
    const browser = browserWith();
    const callback = await authorizeAtProvider(browser, { appUrl, issuer: idp.issuer, provider: PROVIDER, accountId: 'verifier-sub' });
    const verifier = browser.cookie('oidc_verifier');
    expect(verifier).toBeDefined();
    if (verifier) verifier.value = `${verifier.value.slice(0, -2)}AA`;
    const refused = await completeAtApp(browser, appUrl, callback);
    expect(refused.response.status).toBe(400);
    expect(refused.response.text).toContain('external_login_failed');
    expect(browser.cookie('token')).toBeUndefined();

    const second = browserWith();
    const secondCallback = await authorizeAtProvider(second, { appUrl, issuer: idp.issuer, provider: PROVIDER, accountId: 'verifier-sub' });
    const nonce = second.cookie('oidc_nonce');
    if (nonce) nonce.value = 'not-the-nonce';
    const badNonce = await completeAtApp(second, appUrl, secondCallback);
    expect(badNonce.response.status).toBe(400);
    expect(badNonce.response.text).toContain('external_login_failed');
  });

  it('refuses a callback brought to another browser (no flow cookies there)', async () => {
    idp.accounts.set('csrf-sub', { email: 'csrf@idp.test', email_verified: true });
    const attacker = browserWith();
    const callback = await authorizeAtProvider(attacker, { appUrl, issuer: idp.issuer, provider: PROVIDER, accountId: 'csrf-sub' });
    const victim = await registerUser(stack);
    const forced = await completeAtApp(browserWith(victim.token), appUrl, callback);
    expect(forced.response.status).toBe(400);
    expect(forced.response.text).toContain('no_external_sign_in');
    expect((await stack.http.get(`/api/auth/external/${PROVIDER}`, { token: victim.token })).body.linked).toBe(false);
  });

  it('asks a linked account with two-factor sign-in for its code', async () => {
    const erin = await registerUser(stack);
    idp.accounts.set('erin-sub', { email: erin.email, email_verified: true });
    await linkWithProvider(erin.token, 'erin-sub');
    const setup = await stack.http.post('/api/auth/2fa/enable/request', undefined, { token: erin.token });
    expect(setup.status, setup.text).toBe(200);
    const enabled = await stack.http.post(
      '/api/auth/2fa/enable/submit',
      { token: await generate({ secret: setup.body.secret }) },
      { token: erin.token },
    );
    expect(enabled.status, enabled.text).toBe(200);

    const browser = browserWith();
    const login = await signInWithProvider(browser, 'erin-sub');
    expect(login.landedOn?.pathname).toBe('/auth/2fa');
    expect(login.landedOn?.searchParams.get('returnUrl')).toBe('/');
    const pending = browser.cookie('token')?.value;
    expect((await stack.http.get('/api/auth', { cookie: `token=${pending}` })).body.status).toBe('2fa_required');
    expect((await stack.http.get('/api/api-keys', { cookie: `token=${pending}` })).status).toBe(401);
    const verified = await stack.http.post(
      '/api/auth/2fa/verify',
      { token: enabled.body.recoveryCodes[0] },
      { cookie: `token=${pending}` },
    );
    expect(verified.status, verified.text).toBe(200);
    expect(verified.body.status).toBe('ok');
  });

  it('refuses a returnUrl on another origin (no open redirect)', async () => {
    const response = await fetch(`${appUrl}/api/auth/external/${PROVIDER}/init?returnUrl=https://evil.example/`, { redirect: 'manual' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { code: string }).code).toBe('invalid_return_url');
  });
});

describe('the OpenAPI document', () => {
  it('lists every route of spec 4.2 and the ones this work defined', async () => {
    const document = await stack.http.get('/api/openapi.json');
    expect(document.status).toBe(200);
    const paths = document.body.paths as Record<string, Record<string, unknown>>;
    const expected: [string, string][] = [
      ['post', '/api/auth/login'],
      ['get', '/api/auth'],
      ['get', '/api/auth/logout'],
      ['post', '/api/auth/verify/request'],
      ['post', '/api/auth/verify/submit'],
      ['post', '/api/auth/reset/request'],
      ['post', '/api/auth/reset/submit'],
      ['post', '/api/auth/2fa/enable/request'],
      ['post', '/api/auth/2fa/enable/submit'],
      ['post', '/api/auth/2fa/verify'],
      ['post', '/api/auth/2fa/reset'],
      ['get', '/api/auth/external/providers'],
      ['get', '/api/auth/external/{provider}/init'],
      ['get', '/api/auth/external/{provider}/redirect'],
      ['get', '/api/auth/external/{provider}'],
      ['delete', '/api/auth/external/{provider}'],
      ['put', '/api/api-keys'],
      ['get', '/api/api-keys'],
      ['get', '/api/api-keys/{id}'],
      ['patch', '/api/api-keys/{id}'],
      ['delete', '/api/api-keys/{id}'],
      ['get', '/api/users'],
      ['get', '/api/users/{id}'],
      ['post', '/api/auth/register'],
      ['get', '/api/auth/2fa'],
      ['post', '/api/auth/2fa/recovery-codes'],
      ['get', '/api/auth/external/register/{token}'],
      ['post', '/api/auth/external/register'],
      ['get', '/api/auth/external/link/{token}'],
      ['post', '/api/auth/external/link/confirm'],
      ['post', '/api/auth/external/link/cancel'],
      ['get', '/auth/external-link/{token}'],
      ['post', '/api/auth/password'],
    ];
    const missing = expected.filter(([method, path]) => !paths[path]?.[method]).map(([method, path]) => `${method} ${path}`);
    expect(missing).toEqual([]);
  });
});
