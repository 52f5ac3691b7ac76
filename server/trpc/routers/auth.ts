import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { z } from 'zod';
import { User } from '../../../db/entities/index.ts';
import { consumeOneTimeToken, issueOneTimeToken } from '../../auth/oneTimeTokens.ts';
import { hashPassword, verifyPassword } from '../../auth/passwords.ts';
import { clearAccountRateLimit, enforceRateLimit, rateLimitAddress } from '../../auth/rateLimits.ts';
import { clearSessionCookie, endSession, revokeSessions } from '../../auth/sessions.ts';
import { signIn as startSignIn } from '../../auth/signIn.ts';
import { BadRequest, Conflict, Unauthenticated } from '../../errors.ts';
import { sendMail } from '../../mail/sendMail.ts';
import { statusOk } from '../../wireShapes.ts';
import { authedProcedure, publicProcedure, router } from '../base.ts';
import type { Context } from '../context.ts';

const email = z
  .email()
  .max(320)
  .transform((value) => value.toLowerCase());
const password = z.string().min(8, 'a password has at least 8 characters').max(256);
const personName = z.string().trim().min(1).max(100);
const returnUrl = z.string().max(2000).optional();

/** `2fa_required`: the token is good only for `POST /api/auth/2fa/verify`. */
const tokenAnswer = z.object({ status: z.enum(['ok', 'email_not_verified', '2fa_required']), token: z.string() });

const tags = ['auth'];

const emailTaken = (cause?: unknown) =>
  new Conflict('email_taken', 'An account with this e-mail address exists; sign in or reset the password', { cause });

/**
 * Starts a session, sets the cookie and answers with the token, as every sign-in route does; with
 * two-factor sign-in on, the session is a pending one until `POST /api/auth/2fa/verify`.
 */
function signIn(ctx: Context, user: User, remember: boolean, options: { secondFactorDone?: boolean } = {}) {
  return startSignIn(ctx, user, { remember, ...options });
}

/** A link in a mail: the caller's `returnUrl` (same origin as PUBLIC_URL only) or the default page. */
function mailLink(ctx: Context, defaultPath: string, token: string, requested?: string) {
  const base = new URL(ctx.deps.config.publicUrl);
  let url: URL;
  try {
    url = new URL(requested ?? defaultPath, base);
  } catch {
    throw new BadRequest('invalid_return_url', 'returnUrl is not a valid URL');
  }
  if (url.origin !== base.origin) {
    throw new BadRequest('invalid_return_url', `returnUrl must be on ${base.origin}`);
  }
  url.searchParams.set('token', token);
  return url.toString();
}

export async function sendVerificationMail(ctx: Context, user: User, requestedReturnUrl?: string) {
  const token = await issueOneTimeToken(ctx.em, user, 'verify_email');
  const link = mailLink(ctx, '/auth/verify', token, requestedReturnUrl);
  await sendMail(ctx.em, ctx.deps.temporal, ctx.deps.config.temporal.taskQueue, {
    to: user.email,
    subject: 'Verify your e-mail address',
    text: `Hello ${user.firstName},\n\nConfirm your e-mail address by opening:\n${link}\n\nOr submit this verification token: ${token}\n\nIt is valid for 24 hours.`,
  });
}

export const authRouter = router({
  register: publicProcedure
    .meta({ openapi: { method: 'POST', path: '/api/auth/register', tags, summary: 'Create an account' } })
    .input(z.strictObject({ email, password, firstName: personName, lastName: personName }))
    .output(tokenAnswer)
    .mutation(async ({ ctx, input }) => {
      await enforceRateLimit(ctx.em, ctx.deps.config, 'POST /api/auth/register', { ip: rateLimitAddress(ctx.req), account: input.email });
      if (await ctx.em.count(User, { email: input.email })) throw emailTaken();
      const user = ctx.em.create(User, {
        email: input.email,
        firstName: input.firstName,
        lastName: input.lastName,
        passwordHash: await hashPassword(input.password),
        isAdmin: ctx.deps.config.adminEmails.includes(input.email),
      });
      await ctx.em.flush().catch((error: unknown) => {
        // Two registrations that raced past the check above: the unique index decides.
        throw error instanceof UniqueConstraintViolationException ? emailTaken(error) : error;
      });
      const answer = await signIn(ctx, user, false);
      try {
        await sendVerificationMail(ctx, user);
      } catch (error) {
        // The account exists either way; the user can ask for the mail again.
        ctx.log.error({ err: error, userId: user.id }, 'verification mail could not be queued at registration');
      }
      return answer;
    }),

  login: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/auth/login', tags, summary: 'Sign in with e-mail and password' },
    })
    .input(z.strictObject({ email, password: z.string().min(1).max(256), remember: z.boolean().default(false) }))
    .output(tokenAnswer)
    .mutation(async ({ ctx, input }) => {
      // Counted per address whether or not it has an account, so the limit tells nothing either.
      await enforceRateLimit(ctx.em, ctx.deps.config, 'POST /api/auth/login', { ip: rateLimitAddress(ctx.req), account: input.email });
      const user = await ctx.em.findOne(User, { email: input.email }, { populate: ['passwordHash'] });
      // verifyPassword spends the same time on an unknown e-mail as on a wrong password.
      const valid = await verifyPassword(user?.passwordHash, input.password);
      if (!user || !valid) throw new Unauthenticated('E-mail or password is wrong', 'invalid_credentials');
      await clearAccountRateLimit(ctx.em, 'login', input.email, rateLimitAddress(ctx.req));
      return signIn(ctx, user, input.remember);
    }),

  status: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/api/auth', tags, summary: 'The current sign-in state' } })
    .input(z.strictObject({}).optional())
    .output(
      z.object({
        status: z.enum(['ok', 'email_not_verified', '2fa_required', 'anonymous']),
        payload: z
          .object({ sub: z.string(), sid: z.string(), kind: z.string(), iat: z.number().optional(), exp: z.number().optional() })
          .optional(),
        user: z
          .object({
            id: z.string(),
            email: z.string(),
            firstName: z.string(),
            lastName: z.string(),
            emailVerified: z.boolean(),
            isAdmin: z.boolean(),
          })
          .optional(),
        apiKey: z.object({ id: z.string(), name: z.string(), keyPrefix: z.string(), accessType: z.string() }).optional(),
      }),
    )
    .query(({ ctx }) => {
      const { subject } = ctx;
      if (subject.kind === 'anonymous') return { status: 'anonymous' as const };
      const user = {
        id: subject.user.id,
        email: subject.user.email,
        firstName: subject.user.firstName,
        lastName: subject.user.lastName,
        emailVerified: subject.user.emailVerified,
        isAdmin: subject.user.isAdmin,
      };
      if (subject.kind === 'pending2fa') return { status: '2fa_required' as const, user };
      const status = subject.user.emailVerified ? ('ok' as const) : ('email_not_verified' as const);
      if (subject.kind === 'apiKey') {
        const { id, name, keyPrefix, accessType } = subject.apiKey;
        return { status, user, apiKey: { id, name, keyPrefix, accessType } };
      }
      return { status, user, payload: subject.claims };
    }),

  logout: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/api/auth/logout', tags, summary: 'Sign out and clear the cookie' } })
    .input(z.strictObject({}).optional())
    .output(statusOk)
    .query(async ({ ctx }) => {
      const { subject } = ctx;
      if (subject.kind === 'session' || subject.kind === 'pending2fa') {
        await endSession(ctx.em, subject.session.id);
      }
      clearSessionCookie(ctx.reply, ctx.deps.config.publicUrl.startsWith('https:'));
      return { status: 'ok' as const };
    }),

  verifyRequest: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/auth/verify/request', tags, summary: 'Send a verification e-mail' } })
    .input(z.strictObject({ returnUrl }).optional())
    .output(statusOk)
    .mutation(async ({ ctx, input }) => {
      if (ctx.user.emailVerified) throw new BadRequest('already_verified', 'The e-mail address is already verified');
      await sendVerificationMail(ctx, ctx.user, input?.returnUrl);
      return { status: 'ok' as const };
    }),

  verifySubmit: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/auth/verify/submit',
        tags,
        summary: 'Confirm the e-mail address with the mailed token',
      },
    })
    .input(z.strictObject({ token: z.string().min(1).max(200) }))
    .output(tokenAnswer)
    .mutation(async ({ ctx, input }) => {
      const signedInAs = ctx.subject.kind === 'session' || ctx.subject.kind === 'apiKey' ? ctx.subject.user.id : undefined;
      await enforceRateLimit(ctx.em, ctx.deps.config, 'POST /api/auth/verify/submit', {
        ip: rateLimitAddress(ctx.req),
        account: signedInAs,
      });
      const user = await consumeOneTimeToken(ctx.em, input.token, 'verify_email');
      user.emailVerified = true;
      await ctx.em.flush();
      const remember = ctx.subject.kind === 'session' ? ctx.subject.session.remember : false;
      // The session being refreshed already passed the second factor; anyone else holding the
      // mailed token (an anonymous browser) still has to.
      const refreshed = ctx.subject.kind === 'session' && ctx.subject.user.id === user.id ? ctx.subject.session : undefined;
      if (refreshed) await endSession(ctx.em, refreshed.id);
      return signIn(ctx, user, remember, { secondFactorDone: refreshed !== undefined });
    }),

  resetRequest: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/auth/reset/request', tags, summary: 'Mail a password-reset token' },
    })
    .input(z.strictObject({ email, returnUrl }))
    .output(statusOk)
    .mutation(async ({ ctx, input }) => {
      await enforceRateLimit(ctx.em, ctx.deps.config, 'POST /api/auth/reset/request', {
        ip: rateLimitAddress(ctx.req),
        account: input.email,
      });
      mailLink(ctx, '/auth/reset', 'check', input.returnUrl);
      // The same answer, in the same time, whether or not the address has an account: the
      // lookup and the mail happen after the answer, on their own EntityManager.
      const em = ctx.em.fork();
      const mailing = (async () => {
        const user = await em.findOne(User, { email: input.email });
        if (!user) return;
        const token = await issueOneTimeToken(em, user, 'reset_password');
        const link = mailLink(ctx, '/auth/reset', token, input.returnUrl);
        await sendMail(em, ctx.deps.temporal, ctx.deps.config.temporal.taskQueue, {
          to: user.email,
          subject: 'Reset your password',
          text: `Hello ${user.firstName},\n\nSomeone asked to reset the password of this account. To choose a new one, open:\n${link}\n\nOr submit this reset token: ${token}\n\nIt is valid for one hour. If it was not you, ignore this mail.`,
        });
      })();
      mailing.catch((error: unknown) => ctx.log.error({ err: error }, 'password-reset mail could not be queued'));
      return { status: 'ok' as const };
    }),

  resetSubmit: publicProcedure
    .meta({ openapi: { method: 'POST', path: '/api/auth/reset/submit', tags, summary: 'Set a new password with the mailed token' } })
    .input(
      z
        .strictObject({ token: z.string().min(1).max(200), password, confirmPassword: z.string().max(256) })
        .refine((body) => body.password === body.confirmPassword, {
          message: 'confirmPassword does not match password',
          path: ['confirmPassword'],
        }),
    )
    .output(tokenAnswer)
    .mutation(async ({ ctx, input }) => {
      const user = await consumeOneTimeToken(ctx.em, input.token, 'reset_password');
      user.passwordHash = await hashPassword(input.password);
      // Whoever could read the mail proved control of the address.
      user.emailVerified = true;
      await ctx.em.flush();
      await revokeSessions(ctx.em, user.id);
      return signIn(ctx, user, false);
    }),
});
