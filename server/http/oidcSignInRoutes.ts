import { createHmac, hkdfSync } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../appDeps.ts';
import { findIdentity, linkableIdentity, linkIdentity, startExternalLink, startExternalRegistration } from '../auth/externalAccounts.ts';
import { OidcClients } from '../auth/oidc.ts';
import { enforceRateLimit, rateLimitAddress } from '../auth/rateLimits.ts';
import { safeEqual } from '../auth/secrets.ts';
import { signIn } from '../auth/signIn.ts';
import { BadRequest } from '../errors.ts';
import { resolveCaller } from '../requestEdge.ts';
import type { RawApp } from './rawRoutes.ts';

/**
 * The two browser legs of an OpenID Connect sign-in. They answer redirects and set cookies, so
 * they are plain Fastify routes beside the procedures (their OpenAPI entries are in openapi.ts).
 *
 * /init keeps state, nonce and the PKCE verifier in HttpOnly cookies scoped to the provider's
 * /redirect path, for ten minutes, with the flow's intent: `link` bound to the session that
 * started it, or `login`. /redirect clears them first (one try per flow), then sends that same
 * session to /auth/external-link/<token> to confirm the link (POST /api/auth/external/link/confirm
 * links it), signs in the account linked to the identity, or sends the browser to
 * /auth/external-register/<token>.
 */

const FLOW_SECONDS = 10 * 60;
const flowCookies = ['oidc_state', 'oidc_nonce', 'oidc_verifier', 'oidc_intent', 'oidc_return', 'oidc_remember'] as const;

type ProviderParams = { Params: { provider: string } };

export function registerOidcSignInRoutes(app: RawApp, deps: AppDeps) {
  const oidc = new OidcClients(deps.config);
  const secure = deps.config.publicUrl.startsWith('https:');
  const cookieOptions = (provider: string) => ({
    path: `/api/auth/external/${provider}/redirect`,
    httpOnly: true,
    // Lax: the provider brings the browser back with a top-level GET, which carries Lax cookies.
    sameSite: 'lax' as const,
    secure,
  });

  app.get<ProviderParams>('/api/auth/external/:provider/init', async (req, reply) => {
    await enforceRateLimit(deps.orm.em.fork(), deps.config, 'GET /api/auth/external/{provider}/init', { ip: rateLimitAddress(req) });
    const provider = oidc.provider(req.params.provider);
    const returnTo = returnPath(deps.config.publicUrl, query(req).get('returnUrl'));
    const remember = ['', 'true', '1'].includes(query(req).get('remember') ?? 'false');
    const { url, state, nonce, verifier } = await oidc.authorizationRequest(provider);
    // Only a full session started here may link; a pending 2FA session or a stale cookie signs in.
    const subject = await resolveCaller(deps, deps.orm.em.fork(), req, 'cookie');
    const intent = subject.kind === 'session' ? `link.${linkBinding(deps.serviceSecret, state, subject.session.id)}` : 'login';
    const options = { ...cookieOptions(provider.name), maxAge: FLOW_SECONDS };
    reply.setCookie('oidc_state', state, options);
    reply.setCookie('oidc_nonce', nonce, options);
    reply.setCookie('oidc_verifier', verifier, options);
    reply.setCookie('oidc_intent', intent, options);
    reply.setCookie('oidc_return', returnTo, options);
    reply.setCookie('oidc_remember', remember ? '1' : '0', options);
    return reply.header('cache-control', 'no-store').redirect(url.href, 302);
  });

  app.get<ProviderParams>('/api/auth/external/:provider/redirect', async (req, reply) => {
    await enforceRateLimit(deps.orm.em.fork(), deps.config, 'GET /api/auth/external/{provider}/redirect', { ip: rateLimitAddress(req) });
    const provider = oidc.provider(req.params.provider);
    const flow = Object.fromEntries(flowCookies.map((name) => [name, req.cookies[name]]));
    for (const name of flowCookies) reply.clearCookie(name, cookieOptions(provider.name));
    reply.header('cache-control', 'no-store');
    // A flow begun before the intent cookie existed has none: it is started again, never guessed.
    if (!flow.oidc_state || !flow.oidc_nonce || !flow.oidc_verifier || !flow.oidc_intent) {
      throw new BadRequest('no_external_sign_in', 'No sign-in with this provider is in progress in this browser; start again');
    }
    const callbackQuery = req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '';
    if (!safeEqual(new URLSearchParams(callbackQuery).get('state') ?? '', flow.oidc_state)) {
      throw new BadRequest('invalid_state', 'The sign-in state does not match this browser; start again');
    }
    const em = deps.orm.em.fork();
    // A browser navigation: only the cookie says who is signed in.
    const subject = await resolveCaller(deps, em, req, 'cookie');
    // Whether to link is decided by /init, not by whoever holds the cookie now: a flow started
    // signed out (perhaps forced on the browser, with someone else's provider account) must not
    // attach that identity to a session that appeared meanwhile. Checked before the code is
    // redeemed, so a refused flow never reaches the provider's token endpoint.
    const link = flow.oidc_intent !== 'login';
    if (link) {
      const expected = subject.kind === 'session' ? `link.${linkBinding(deps.serviceSecret, flow.oidc_state, subject.session.id)}` : '';
      if (!safeEqual(flow.oidc_intent, expected)) {
        throw new BadRequest(
          'external_flow_mismatch',
          'This provider link was started by another session than the one signed in now; start again',
        );
      }
    }
    const profile = await oidc.completeAuthorization(provider, callbackQuery, {
      state: flow.oidc_state,
      nonce: flow.oidc_nonce,
      verifier: flow.oidc_verifier,
    });
    const returnTo = returnPath(deps.config.publicUrl, flow.oidc_return);
    const target = { em, deps, reply };

    if (link && subject.kind === 'session') {
      // A clash is a 409 now rather than after the user confirmed something that cannot be done.
      if (await linkableIdentity(em, subject.user, profile)) {
        // Linked to this account already: nothing new is attached, so there is nothing to confirm.
        await linkIdentity(em, subject.user, profile);
        return redirectTo(reply, deps, returnTo);
      }
      const token = await startExternalLink(em, { user: subject.user, session: subject.session, profile, returnTo });
      return redirectTo(reply, deps, `/auth/external-link/${token}`);
    }
    const identity = await findIdentity(em, profile.provider, profile.subject);
    if (identity) {
      identity.email = profile.email;
      await em.flush();
      const answer = await signIn(target, identity.user, { remember: flow.oidc_remember === '1' });
      if (answer.status === '2fa_required') return redirectTo(reply, deps, `/auth/2fa?returnUrl=${encodeURIComponent(returnTo)}`);
      return redirectTo(reply, deps, returnTo);
    }
    const token = await startExternalRegistration(em, profile);
    return redirectTo(reply, deps, `/auth/external-register/${token}`);
  });
}

/**
 * Binds a link flow to the auth session that started it, and to that flow's state: an HMAC under
 * a key derived from the service secret, so the cookie neither shows the session id nor can be
 * made for another session or flow without the secret.
 */
function linkBinding(serviceSecret: string, state: string, sessionId: string) {
  const key = Buffer.from(hkdfSync('sha256', serviceSecret, 'browserflow-oidc-flow', 'link-session', 32));
  return createHmac('sha256', key).update(`${state}\n${sessionId}`).digest('base64url');
}

function query(req: FastifyRequest) {
  const index = req.url.indexOf('?');
  return new URLSearchParams(index === -1 ? '' : req.url.slice(index + 1));
}

/** The path to come back to: on PUBLIC_URL's origin only, so the flow is no open redirect. */
function returnPath(publicUrl: string, requested: string | null | undefined) {
  if (!requested) return '/';
  const base = new URL(publicUrl);
  let url: URL;
  try {
    url = new URL(requested, base);
  } catch {
    throw new BadRequest('invalid_return_url', 'returnUrl is not a valid URL');
  }
  if (url.origin !== base.origin) throw new BadRequest('invalid_return_url', `returnUrl must be on ${base.origin}`);
  return `${url.pathname}${url.search}${url.hash}`;
}

function redirectTo(reply: FastifyReply, deps: AppDeps, path: string) {
  return reply.redirect(new URL(path, deps.config.publicUrl).href, 302);
}
