import * as client from 'openid-client';
import type { Config } from '../config.ts';
import { BadRequest, NotFound, ServiceUnavailable } from '../errors.ts';

/**
 * OpenID Connect relying party for the providers of `OIDC_PROVIDERS`: discovery, the
 * authorization request (PKCE S256, state, nonce) and the code exchange.
 */

export type OidcProvider = Config['oidcProviders'][number];

/** What the provider says about the person, reduced to what the accounts need. */
export type ExternalProfile = {
  provider: string;
  subject: string;
  email: string | null;
  /** Only when the provider vouches for `email` (`email_verified`). */
  emailVerified: boolean;
  firstName: string | null;
  lastName: string | null;
};

// Discovery documents change rarely; keys rotate, and openid-client refetches the JWKS itself.
const DISCOVERY_TTL_MS = 60 * 60 * 1000;
const SCOPE = 'openid email profile';

export class OidcClients {
  readonly #config: Config;
  readonly #discovered = new Map<string, { at: number; configuration: Promise<client.Configuration> }>();

  constructor(config: Config) {
    this.#config = config;
  }

  provider(name: string): OidcProvider {
    const provider = this.#config.oidcProviders.find((candidate) => candidate.name === name);
    if (!provider) throw new NotFound(`External provider ${name}`, 'unknown_provider');
    return provider;
  }

  redirectUri(provider: OidcProvider) {
    return `${this.#config.publicUrl}/api/auth/external/${provider.name}/redirect`;
  }

  /** Builds the authorization request; the caller keeps `state`, `nonce` and `verifier` in cookies. */
  async authorizationRequest(provider: OidcProvider) {
    const configuration = await this.#configuration(provider);
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: this.redirectUri(provider),
      scope: SCOPE,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url, state, nonce, verifier };
  }

  /**
   * Exchanges the code of the callback URL for tokens, checking state, nonce and the PKCE
   * verifier, and reads the profile from the ID token (or UserInfo where the ID token is thin).
   */
  async completeAuthorization(
    provider: OidcProvider,
    callbackQuery: string,
    checks: { state: string; nonce: string; verifier: string },
  ): Promise<ExternalProfile> {
    const configuration = await this.#configuration(provider);
    const currentUrl = new URL(`${this.redirectUri(provider)}?${callbackQuery}`);
    try {
      const tokens = await client.authorizationCodeGrant(configuration, currentUrl, {
        pkceCodeVerifier: checks.verifier,
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        idTokenExpected: true,
      });
      const idToken = tokens.claims();
      if (!idToken) throw new BadRequest('external_login_failed', 'The provider sent no ID token');
      let claims: Record<string, unknown> = idToken;
      // Providers that follow the spec strictly put scope claims (email) in UserInfo only.
      if (idToken.email === undefined && configuration.serverMetadata().userinfo_endpoint) {
        claims = { ...(await client.fetchUserInfo(configuration, tokens.access_token, idToken.sub)), ...idToken };
      }
      return toProfile(provider.name, idToken.sub, claims);
    } catch (error) {
      throw translateOidcError(error);
    }
  }

  async #configuration(provider: OidcProvider) {
    const key = provider.name;
    const cached = this.#discovered.get(key);
    if (cached && Date.now() - cached.at < DISCOVERY_TTL_MS) return cached.configuration;
    const configuration = client.discovery(
      new URL(provider.issuer),
      provider.clientId,
      provider.clientSecret,
      undefined,
      this.#config.oidcAllowInsecureRequests ? { execute: [client.allowInsecureRequests] } : undefined,
    );
    this.#discovered.set(key, { at: Date.now(), configuration });
    try {
      return await configuration;
    } catch (error) {
      // A failed discovery is not cached: the next sign-in tries again.
      this.#discovered.delete(key);
      throw new ServiceUnavailable(`The provider ${provider.name} cannot be reached`, error);
    }
  }
}

function text(value: unknown, max: number) {
  return typeof value === 'string' && value.trim() ? value.trim().slice(0, max) : null;
}

function toProfile(provider: string, subject: string, claims: Record<string, unknown>): ExternalProfile {
  const email = text(claims.email, 320)?.toLowerCase() ?? null;
  let firstName = text(claims.given_name, 100);
  let lastName = text(claims.family_name, 100);
  const name = text(claims.name, 201);
  if (name && !firstName && !lastName) {
    const [first, ...rest] = name.split(/\s+/);
    firstName = first?.slice(0, 100) ?? null;
    lastName = rest.join(' ').slice(0, 100) || null;
  }
  return {
    provider,
    subject,
    email,
    // Some providers (Cognito) send the string "true"; anything else is unverified.
    emailVerified: email !== null && (claims.email_verified === true || claims.email_verified === 'true'),
    firstName,
    lastName,
  };
}

function translateOidcError(error: unknown) {
  if (error instanceof BadRequest) return error;
  if (error instanceof client.AuthorizationResponseError) {
    return new BadRequest('external_login_denied', `The provider refused the sign-in: ${error.error}`, { cause: error });
  }
  if (error instanceof client.ResponseBodyError || error instanceof client.ClientError) {
    return new BadRequest('external_login_failed', `The sign-in with the provider failed: ${error.message}`, { cause: error });
  }
  return new ServiceUnavailable('The provider cannot be reached', error);
}
