import { z } from 'zod';
import { clearAccountRateLimit, enforceRateLimit, type RateLimitedRoute, rateLimitAddress } from '../../auth/rateLimits.ts';
import { endSession, revokeSessions } from '../../auth/sessions.ts';
import { signIn } from '../../auth/signIn.ts';
import {
  acceptRecoveryCode,
  acceptTotp,
  countUnusedRecoveryCodes,
  disableTwoFactor,
  loadTwoFactorUser,
  newTotpSetup,
  replaceRecoveryCodes,
  sealTotpSecret,
} from '../../auth/twoFactor.ts';
import { BadRequest, EmailNotVerified, Unauthenticated } from '../../errors.ts';
import { statusOk } from '../../wireShapes.ts';
import { authedProcedure, publicProcedure, router, sessionProcedure } from '../base.ts';
import type { Context } from '../context.ts';

const tags = ['auth'];
const TOTP_ISSUER = 'Browserflow';

const code = z.string().trim().min(1).max(64);
const codeBody = z.strictObject({
  token: code.describe('A current code of the authenticator app, or (where allowed) an unused recovery code'),
});
const recoveryCodes = z.array(z.string()).describe('Ten single-use recovery codes, shown only now');

const verifiedSessionProcedure = sessionProcedure.use(({ ctx, next }) => {
  if (!ctx.user.emailVerified) throw new EmailNotVerified();
  return next();
});

const wrongCode = () => new BadRequest('invalid_code', 'The code is wrong or was already used');

/** Counts the attempt against the IP and the account; a right code clears the account's count. */
function limitAttempt(ctx: Context, route: RateLimitedRoute, userId: string) {
  return enforceRateLimit(ctx.em, ctx.deps.config, route, { ip: rateLimitAddress(ctx.req), account: userId });
}

/** A TOTP code, or (when allowed) a recovery code; each is good once. */
async function acceptSecondFactor(ctx: Context, userId: string, token: string, options: { recoveryCodes: boolean }) {
  const user = await loadTwoFactorUser(ctx.em, userId);
  const accepted =
    (await acceptTotp(ctx.em, ctx.deps.serviceSecret, user, token)) ||
    (options.recoveryCodes ? await acceptRecoveryCode(ctx.em, ctx.deps.serviceSecret, user, token) : false);
  if (accepted) await clearAccountRateLimit(ctx.em, 'twoFactor', userId);
  return { user, accepted };
}

export const twoFactorRouter = router({
  status: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/auth/2fa', tags, summary: 'Whether two-factor sign-in is on' } })
    .input(z.strictObject({}).optional())
    .output(z.object({ enabled: z.boolean(), recoveryCodesRemaining: z.number().int() }))
    .query(async ({ ctx }) => ({
      enabled: ctx.user.twoFactorEnabled,
      recoveryCodesRemaining: ctx.user.twoFactorEnabled ? await countUnusedRecoveryCodes(ctx.em, ctx.user.id) : 0,
    })),

  enableRequest: verifiedSessionProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/auth/2fa/enable/request',
        tags,
        summary: 'Start turning on two-factor sign-in',
        description:
          'Answers a new TOTP secret and its otpauth:// URI (for a QR code). Two-factor sign-in is on only after enable/submit with a code of it. Needs a verified e-mail address (400 otherwise).',
      },
    })
    .input(z.strictObject({}).optional())
    .output(z.object({ status: z.literal('2fa_setup'), url: z.string(), secret: z.string() }))
    .mutation(async ({ ctx }) => {
      const user = await loadTwoFactorUser(ctx.em, ctx.user.id);
      if (user.twoFactorEnabled) {
        throw new BadRequest('two_factor_enabled', 'Two-factor sign-in is already on; reset it first to change the authenticator');
      }
      const setup = newTotpSetup(TOTP_ISSUER, user.email);
      // Replaces any earlier unfinished setup; the secret is returned now and never again.
      user.totpSecret = sealTotpSecret(ctx.deps.serviceSecret, setup.secret);
      user.totpLastStep = null;
      await ctx.em.flush();
      return { status: '2fa_setup' as const, url: setup.url, secret: setup.secret };
    }),

  enableSubmit: verifiedSessionProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/auth/2fa/enable/submit',
        tags,
        summary: 'Turn on two-factor sign-in with a current code',
        description:
          'Turns two-factor sign-in on, answers ten recovery codes (shown only now), ends every other session of the account and refreshes the cookie.',
      },
    })
    .input(z.strictObject({ token: code.describe('A current code of the authenticator app') }))
    .output(z.object({ status: z.literal('ok'), token: z.string(), recoveryCodes }))
    .mutation(async ({ ctx, input }) => {
      await limitAttempt(ctx, 'POST /api/auth/2fa/enable/submit', ctx.user.id);
      const current = await loadTwoFactorUser(ctx.em, ctx.user.id);
      if (current.twoFactorEnabled) throw new BadRequest('two_factor_enabled', 'Two-factor sign-in is already on');
      if (!current.totpSecret) throw new BadRequest('no_setup', 'Call POST /api/auth/2fa/enable/request first');
      const { user, accepted } = await acceptSecondFactor(ctx, ctx.user.id, input.token, { recoveryCodes: false });
      if (!accepted) throw wrongCode();
      user.twoFactorEnabled = true;
      await ctx.em.flush();
      const codes = await replaceRecoveryCodes(ctx.em, ctx.deps.serviceSecret, user);
      await revokeSessions(ctx.em, user.id);
      const { token } = await signIn(ctx, user, { remember: ctx.subject.session.remember, secondFactorDone: true });
      return { status: 'ok' as const, token, recoveryCodes: codes };
    }),

  verify: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/auth/2fa/verify',
        tags,
        summary: 'Complete a sign-in that answered 2fa_required',
        description:
          'Called with the token of the `2fa_required` answer (cookie or Authorization: Bearer). Body `{token}`: a current code of the authenticator app or an unused recovery code. Answers `{status, token}` like login and sets the cookie; 401 for a wrong or reused code.',
      },
    })
    .input(codeBody)
    .output(
      z.object({
        status: z.enum(['ok', 'email_not_verified']),
        token: z.string(),
        recoveryCodesRemaining: z.number().int().optional().describe('Present when a recovery code was used'),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const { subject } = ctx;
      if (subject.kind !== 'pending2fa') {
        throw new Unauthenticated('No two-factor sign-in in progress; sign in with e-mail and password first', 'no_2fa_pending');
      }
      await limitAttempt(ctx, 'POST /api/auth/2fa/verify', subject.user.id);
      const user = await loadTwoFactorUser(ctx.em, subject.user.id);
      const byTotp = await acceptTotp(ctx.em, ctx.deps.serviceSecret, user, input.token);
      const byRecovery = !byTotp && (await acceptRecoveryCode(ctx.em, ctx.deps.serviceSecret, user, input.token));
      if (!byTotp && !byRecovery) throw new Unauthenticated('The code is wrong or was already used', 'invalid_code');
      await clearAccountRateLimit(ctx.em, 'twoFactor', user.id);
      await endSession(ctx.em, subject.session.id);
      const answer = await signIn(ctx, user, { remember: subject.session.remember, secondFactorDone: true });
      const status = answer.status === 'ok' ? ('ok' as const) : ('email_not_verified' as const);
      return {
        status,
        token: answer.token,
        ...(byRecovery ? { recoveryCodesRemaining: await countUnusedRecoveryCodes(ctx.em, user.id) } : {}),
      };
    }),

  reset: sessionProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/auth/2fa/reset',
        tags,
        summary: 'Turn off two-factor sign-in',
        description:
          'Body `{token}`: a current code of the authenticator app or an unused recovery code. Revokes the secret and the recovery codes and ends every other session of the account. Answers `{status: "ok"}`.',
      },
    })
    .input(codeBody)
    .output(statusOk)
    .mutation(async ({ ctx, input }) => {
      if (!ctx.user.twoFactorEnabled) throw new BadRequest('two_factor_disabled', 'Two-factor sign-in is not on');
      await limitAttempt(ctx, 'POST /api/auth/2fa/reset', ctx.user.id);
      const { user, accepted } = await acceptSecondFactor(ctx, ctx.user.id, input.token, { recoveryCodes: true });
      if (!accepted) throw wrongCode();
      await disableTwoFactor(ctx.em, user);
      await revokeSessions(ctx.em, user.id, ctx.subject.session.id);
      return { status: 'ok' as const };
    }),

  regenerateRecoveryCodes: sessionProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/auth/2fa/recovery-codes',
        tags,
        summary: 'Replace the recovery codes',
        description:
          'Body `{token}`: a current code of the authenticator app. The earlier codes stop working; the ten new ones are shown only now.',
      },
    })
    .input(z.strictObject({ token: code.describe('A current code of the authenticator app') }))
    .output(z.object({ recoveryCodes }))
    .mutation(async ({ ctx, input }) => {
      if (!ctx.user.twoFactorEnabled) throw new BadRequest('two_factor_disabled', 'Two-factor sign-in is not on');
      await limitAttempt(ctx, 'POST /api/auth/2fa/recovery-codes', ctx.user.id);
      const { user, accepted } = await acceptSecondFactor(ctx, ctx.user.id, input.token, { recoveryCodes: false });
      if (!accepted) throw wrongCode();
      return { recoveryCodes: await replaceRecoveryCodes(ctx.em, ctx.deps.serviceSecret, user) };
    }),
});
