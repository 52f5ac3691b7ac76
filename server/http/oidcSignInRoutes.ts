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
import { type RawApp, rawRouteGroup, routesOf } from './rawRoute.ts';

/**
 * The two browser legs of an OpenID Connect sign-in. They answer redirects and set cookies, so
 * they are raw routes beside the procedures.
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

/** What both legs share: the providers' clients and where their flow cookies live. */
function oidcSignIn(_app: RawApp, deps: AppDeps) {
  const oidc = new OidcClients(deps.config);
  const secure = deps.config.publicUrl.startsWith('https:');
  const cookieOptions = (provider: string) => ({
    path: `/api/auth/external/${provider}/redirect`,
    httpOnly: true,
    // Lax: the provider brings the browser back with a top-level GET, which carries Lax cookies.
    sameSite: 'lax' as const,
    secure,
  });
  return { deps, oidc, cookieOptions };
}

const route = routesOf<ReturnType<typeof oidcSignIn>>();

export const oidcSignInRoutes = rawRouteGroup(oidcSignIn, [
  route({
    method: 'GET',
    path: '/api/auth/external/{provider}/init',
    doc: {
      operationId: 'auth-external-init',
      summary: 'Start signing in (or linking) with an external OpenID Connect provider',
      description:
        'Redirects the browser to the provider (authorization code flow with PKCE S256, state and nonce, kept in HttpOnly cookies for ten minutes). Signed in, the flow links the provider to the account once the user confirms it; signed out, it signs in or registers. `returnUrl` (same origin) is where the browser lands at the end; `remember` asks for a long-lived session.',
      tags: ['auth'],
      pathParameters: { provider: { description: 'A name from GET /api/auth/external/providers' } },
      parameters: [
        { name: 'returnUrl', in: 'query', required: false, schema: { type: 'string' } },
        { name: 'remember', in: 'query', required: false, schema: { type: 'boolean' } },
      ],
      responses: {
        '302': { description: 'To the provider' },
        '404': { description: 'Unknown provider' },
        '503': { description: 'The provider cannot be reached' },
      },
    },
    serve:
      ({ deps, oidc, cookieOptions }) =>
      async (req, reply) => {
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
      },
  }),
  route({
    method: 'GET',
    path: '/api/auth/external/{provider}/redirect',
    doc: {
      operationId: 'auth-external-redirect',
      summary: 'The provider sends the browser back here',
      description:
        'Checks state, nonce and the PKCE verifier and exchanges the code. Then: a flow /init started signed in → only when the same session completes it (400 `external_flow_mismatch` otherwise, nothing linked), and the identity can be linked (409 if it is linked to another user, or the account has another identity of this provider), redirects to /auth/external-link/<token>, where the user confirms (POST /api/auth/external/link/confirm) or cancels; nothing is linked before that (an identity linked to this account already is refreshed and the browser goes to returnUrl); a flow started signed out never links, whoever is signed in by then: identity linked to an account → signs it in (cookie) and redirects to returnUrl, or to /auth/2fa?returnUrl=… when the account has two-factor sign-in; unknown identity → redirects to /auth/external-register/<token> (see POST /api/auth/external/register).',
      tags: ['auth'],
      parameters: [
        { name: 'code', in: 'query', required: false, schema: { type: 'string' } },
        { name: 'state', in: 'query', required: true, schema: { type: 'string' } },
      ],
      responses: {
        '302': { description: 'To /auth/external-link/<token>, returnUrl, /auth/2fa or /auth/external-register/<token>' },
        '400': {
          description:
            'No flow in progress, state mismatch, a link flow completed by another session than the one that started it, or the provider refused the code or the verifier',
        },
        '409': {
          description: 'A link flow: the identity is linked to another account, or the account has another identity of this provider',
        },
      },
    },
    serve:
      ({ deps, oidc, cookieOptions }) =>
      async (req, reply) => {
        await enforceRateLimit(deps.orm.em.fork(), deps.config, 'GET /api/auth/external/{provider}/redirect', {
          ip: rateLimitAddress(req),
        });
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
      },
  }),
]);

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
