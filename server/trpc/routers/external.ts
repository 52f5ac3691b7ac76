import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import { z } from 'zod';
import { ExternalIdentity, User } from '../../../db/entities/index.ts';
import {
  cancelExternalLink,
  claimExternalRegistration,
  confirmExternalLink,
  EXTERNAL_LINK_TTL_MS,
  findExternalLink,
  findExternalRegistration,
  linkRequestProfile,
} from '../../auth/externalAccounts.ts';
import { enforceRateLimit, rateLimitAddress } from '../../auth/rateLimits.ts';
import { signIn } from '../../auth/signIn.ts';
import { BadRequest, Conflict, NotFound } from '../../errors.ts';
import { iso, statusOk } from '../../wireShapes.ts';
import { authedProcedure, publicProcedure, router, sessionProcedure } from '../base.ts';
import type { Context } from '../context.ts';
import { sendVerificationMail } from './auth.ts';

/**
 * Sign-in through OpenID Connect providers: the JSON routes. The browser redirects
 * (`/api/auth/external/{provider}/init` and `/redirect`) are raw routes in
 * server/http/oidcSignInRoutes.ts.
 */

const tags = ['auth'];
const providerName = z.string().min(1).max(64);
const registrationToken = z.string().min(1).max(200);
const linkToken = z.string().min(1).max(200);
const personName = z.string().trim().min(1).max(100);

function knownProvider(ctx: Context, name: string) {
  const provider = ctx.deps.config.oidcProviders.find((candidate) => candidate.name === name);
  if (!provider) throw new NotFound(`External provider ${name}`, 'unknown_provider');
  return provider;
}

export const externalAuthRouter = router({
  // Static paths before `{provider}`: the REST matcher takes the first match.
  providers: publicProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/auth/external/providers', tags, summary: 'The names of the external sign-in providers' },
    })
    .input(z.strictObject({}).optional())
    .output(z.array(z.string()))
    .query(({ ctx }) => ctx.deps.config.oidcProviders.map((provider) => provider.name)),

  registration: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/auth/external/register/{token}',
        tags,
        summary: 'What the provider told about an identity waiting to register',
        description: 'For the page at /auth/external-register/<token>: prefills the form. Does not use up the token.',
      },
    })
    .input(z.strictObject({ token: registrationToken }))
    .output(
      z.object({
        provider: z.string(),
        email: z.string().nullable(),
        emailVerified: z.boolean(),
        firstName: z.string().nullable(),
        lastName: z.string().nullable(),
        expires: z.string(),
      }),
    )
    .query(async ({ ctx, input }) => {
      const row = await findExternalRegistration(ctx.em, input.token);
      return {
        provider: row.provider,
        email: row.email ?? null,
        emailVerified: row.emailVerified,
        firstName: row.firstName ?? null,
        lastName: row.lastName ?? null,
        expires: iso(row.expiresAt),
      };
    }),

  register: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/auth/external/register',
        tags,
        summary: 'Create an account for an identity of an external provider',
        description:
          'Completes the redirect to /auth/external-register/<token>: creates the account, links the identity and signs in (like login). The token is single-use and good for 15 minutes. `email` is needed only when the provider sent none; an address the provider did not verify gets a verification mail. `firstName` and `lastName` default to the provider’s. 409 when the e-mail address has an account (sign in and link the provider instead).',
      },
    })
    .input(
      z.strictObject({
        token: registrationToken,
        email: z
          .email()
          .max(320)
          .transform((value) => value.toLowerCase())
          .optional(),
        firstName: personName.optional(),
        lastName: personName.optional(),
      }),
    )
    .output(z.object({ status: z.enum(['ok', 'email_not_verified']), token: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const registration = await findExternalRegistration(ctx.em, input.token);
      const email = input.email ?? registration.email;
      const firstName = input.firstName ?? registration.firstName;
      const lastName = input.lastName ?? registration.lastName;
      const missing = [!email && 'email', !firstName && 'firstName', !lastName && 'lastName'].filter((field) => typeof field === 'string');
      if (!email || !firstName || !lastName) {
        throw new BadRequest('invalid_input', `The provider did not tell ${missing.join(', ')}; send it in the body`, {
          issues: missing.map((field) => ({ path: [field], message: 'required', code: 'missing' })),
        });
      }
      // The same limits as a plain registration: one token must not check addresses endlessly.
      await enforceRateLimit(ctx.em, ctx.deps.config, 'POST /api/auth/external/register', {
        ip: rateLimitAddress(ctx.req),
        account: email,
      });
      // Checked before the token is used up, so the user can retry with another address.
      if (await ctx.em.count(User, { email })) {
        throw new Conflict('email_taken', 'An account with this e-mail address exists; sign in and link the provider from there');
      }
      if (await ctx.em.count(ExternalIdentity, { provider: registration.provider, subject: registration.subject })) {
        throw new Conflict('identity_linked_elsewhere', 'This identity is already linked to an account');
      }
      const emailVerified = registration.emailVerified && email === registration.email;
      // One transaction: if the account cannot be created (the address was taken meanwhile, a 409),
      // the token is not used up.
      const userId = await ctx.em
        .transactional(async (tx) => {
          await claimExternalRegistration(tx, registration);
          const created = tx.create(User, {
            email,
            firstName,
            lastName,
            passwordHash: null,
            emailVerified,
            // Admin rights follow a proven address only.
            isAdmin: emailVerified && ctx.deps.config.adminEmails.includes(email),
          });
          tx.create(ExternalIdentity, {
            user: created,
            provider: registration.provider,
            subject: registration.subject,
            email: registration.email,
          });
          await tx.flush();
          return created.id;
        })
        .catch(async (error: unknown) => {
          // A concurrent registration took the address (or linked the identity) after the checks above.
          if (!(error instanceof UniqueConstraintViolationException)) throw error;
          if (await ctx.em.fork().count(User, { email })) {
            throw new Conflict('email_taken', 'An account with this e-mail address exists; sign in and link the provider from there');
          }
          throw new Conflict('identity_linked_elsewhere', 'This identity is already linked to an account', { cause: error });
        });
      const user = await ctx.em.findOneOrFail(User, userId);
      const answer = await signIn(ctx, user, { remember: false });
      if (!emailVerified) {
        try {
          await sendVerificationMail(ctx, user);
        } catch (error) {
          // The account exists either way; POST /api/auth/verify/request sends the mail again.
          ctx.log.error({ err: error, userId: user.id }, 'verification mail could not be queued at external registration');
        }
      }
      return { status: answer.status === 'ok' ? ('ok' as const) : ('email_not_verified' as const), token: answer.token };
    }),

  pendingLink: sessionProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/auth/external/link/{token}',
        tags,
        summary: 'What a link flow would link: the provider’s identity and the account',
        description:
          'For the page at /auth/external-link/<token>, where a link flow started signed in lands: shows what the user is asked to confirm. Only the session that started the flow may read it (400 `external_flow_mismatch` for any other). 400 `invalid_token` when the token is unknown, expired or used. Does not use up the token.',
      },
    })
    .input(z.strictObject({ token: linkToken }))
    .output(
      z.object({
        provider: z.string(),
        subject: z.string(),
        email: z.string().nullable(),
        emailVerified: z.boolean(),
        firstName: z.string().nullable(),
        lastName: z.string().nullable(),
        account: z.object({ email: z.string(), firstName: z.string(), lastName: z.string() }),
        returnUrl: z.string(),
        expires: z.string(),
      }),
    )
    .query(async ({ ctx, input }) => {
      const row = await findExternalLink(ctx.em, input.token, ctx.subject.session);
      return {
        ...linkRequestProfile(row),
        account: { email: ctx.user.email, firstName: ctx.user.firstName, lastName: ctx.user.lastName },
        returnUrl: row.returnTo,
        expires: iso(row.expiresAt),
      };
    }),

  confirmLink: sessionProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/auth/external/link/confirm',
        tags,
        summary: 'Link the identity a link flow came back with',
        description: `Completes the redirect to /auth/external-link/<token>: links the provider’s identity to the signed-in account and answers the flow’s returnUrl. Only the session that started the flow may confirm (400 \`external_flow_mismatch\`, the token stays usable); the token is single-use and good for ${EXTERNAL_LINK_TTL_MS / 60_000} minutes (400 \`invalid_token\`). 409 \`identity_linked_elsewhere\` or \`provider_already_linked\` when the link cannot be made; the token stays usable.`,
      },
    })
    .input(z.strictObject({ token: linkToken }))
    .output(z.object({ status: z.literal('ok'), provider: z.string(), returnUrl: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const row = await findExternalLink(ctx.em, input.token, ctx.subject.session);
      await confirmExternalLink(ctx.em, row);
      return { status: 'ok' as const, provider: row.provider, returnUrl: row.returnTo };
    }),

  cancelLink: sessionProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/auth/external/link/cancel',
        tags,
        summary: 'Refuse the link a link flow came back with',
        description:
          'Uses the token up without linking anything, and answers the flow’s returnUrl. The same session and token rules as confirm.',
      },
    })
    .input(z.strictObject({ token: linkToken }))
    .output(z.object({ status: z.literal('ok'), returnUrl: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const row = await findExternalLink(ctx.em, input.token, ctx.subject.session);
      await cancelExternalLink(ctx.em, row);
      return { status: 'ok' as const, returnUrl: row.returnTo };
    }),

  get: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/auth/external/{provider}',
        tags,
        summary: 'The identity of this provider linked to the account',
      },
    })
    .input(z.strictObject({ provider: providerName }))
    .output(
      z.object({
        provider: z.string(),
        linked: z.boolean(),
        subject: z.string().optional(),
        email: z.string().nullable().optional(),
        created: z.string().optional(),
      }),
    )
    .query(async ({ ctx, input }) => {
      const provider = knownProvider(ctx, input.provider);
      const identity = await ctx.em.findOne(ExternalIdentity, { user: ctx.user.id, provider: provider.name });
      if (!identity) return { provider: provider.name, linked: false };
      return { provider: provider.name, linked: true, subject: identity.subject, email: identity.email, created: iso(identity.created) };
    }),

  unlink: sessionProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/auth/external/{provider}',
        tags,
        summary: 'Unlink the identity of this provider',
        description: 'Refused (400) when it is the account’s last way to sign in: no password and no other linked provider.',
      },
    })
    .input(z.strictObject({ provider: providerName }))
    .output(statusOk)
    .mutation(async ({ ctx, input }) => {
      const provider = knownProvider(ctx, input.provider);
      const identity = await ctx.em.findOne(ExternalIdentity, { user: ctx.user.id, provider: provider.name });
      if (!identity) throw new NotFound(`A linked ${provider.name} identity`);
      // Under a lock on the user row, so two unlinks at once cannot both see "another way is left".
      await ctx.em.transactional(async (em) => {
        const user = await em.findOneOrFail(User, ctx.user.id, { populate: ['passwordHash'], lockMode: LockMode.PESSIMISTIC_WRITE });
        const identities = await em.count(ExternalIdentity, { user: user.id });
        if (!user.passwordHash && identities <= 1) {
          throw new BadRequest('last_sign_in_method', 'This is the only way to sign in to the account; set a password first');
        }
        await em.nativeDelete(ExternalIdentity, { id: identity.id });
      });
      return { status: 'ok' as const };
    }),
});
