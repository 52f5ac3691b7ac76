import { randomBytes } from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';
import { freePort } from '../../server/infra/ports.ts';
import type { Browser } from './browser.ts';

export type ProviderAccount = {
  email?: string;
  email_verified?: boolean | string;
  given_name?: string;
  family_name?: string;
  name?: string;
};

/**
 * A real OpenID provider (npm `oidc-provider`) on loopback, with its development login and
 * consent pages. Accounts are whatever the test puts in `accounts` (the login page accepts any
 * password); their claims come from there.
 */
export async function startOidcProvider(options: { redirectUris: string[] }) {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = 'browserflow-test';
  const clientSecret = randomBytes(24).toString('hex');
  const accounts = new Map<string, ProviderAccount>();
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'given_name', 'family_name'] },
    async findAccount(_ctx: unknown, id: string) {
      return { accountId: id, claims: async () => ({ sub: id, ...accounts.get(id) }) };
    },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    pkce: { required: () => true },
  });
  const server = http.createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Drives a browser through `/init` → the provider's login and consent forms → back to the
 * callback. Stops before requesting the callback, so a test can tamper with it; returns its URL.
 */
export async function authorizeAtProvider(
  browser: Browser,
  options: { appUrl: string; issuer: string; provider: string; accountId: string; initQuery?: string },
) {
  const appOrigin = new URL(options.appUrl).origin;
  const isCallback = (url: URL) => url.origin === appOrigin && url.pathname === `/api/auth/external/${options.provider}/redirect`;
  const initUrl = `${options.appUrl}/api/auth/external/${options.provider}/init${options.initQuery ? `?${options.initQuery}` : ''}`;
  let step = await browser.follow(initUrl, { stopBefore: isCallback });
  for (let page = 0; page < 4 && !step.next; page++) {
    const { last } = step;
    if (last.status !== 200 || last.url.origin !== options.issuer || !last.url.pathname.startsWith('/interaction/')) {
      throw new Error(`unexpected page ${last.url} (${last.status}): ${last.text.slice(0, 400)}`);
    }
    const prompt = /name="prompt" value="(\w+)"/.exec(last.text)?.[1];
    const form: Record<string, string> = prompt === 'login' ? { prompt, login: options.accountId, password: 'any' } : { prompt: 'consent' };
    step = await browser.follow(last.url, { method: 'POST', form, stopBefore: isCallback });
  }
  if (!step.next) throw new Error(`the provider did not redirect back: ${step.last.url} ${step.last.status}`);
  return step.next;
}

/** Requests the callback and follows our redirects up to the first page outside /api/. */
export async function completeAtApp(browser: Browser, appUrl: string, callback: URL) {
  const appOrigin = new URL(appUrl).origin;
  const result = await browser.follow(callback, { stopBefore: (url) => url.origin === appOrigin && !url.pathname.startsWith('/api/') });
  return { landedOn: result.next, response: result.last };
}
