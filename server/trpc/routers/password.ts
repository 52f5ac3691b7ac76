import { z } from 'zod';
import { User } from '../../../db/entities/index.ts';
import { hashPassword, verifyPassword } from '../../auth/passwords.ts';
import { clearAccountRateLimit, enforceRateLimit, rateLimitAddress } from '../../auth/rateLimits.ts';
import { revokeSessions } from '../../auth/sessions.ts';
import { BadRequest } from '../../errors.ts';
import { statusOk } from '../../wireShapes.ts';
import { router, sessionProcedure } from '../base.ts';

const tags = ['auth'];

export const passwordRouter = router({
  change: sessionProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/auth/password',
        tags,
        summary: 'Change (or, for an account made through a provider, set) the password',
        description:
          '`currentPassword` is required when the account has a password. Every other session of the account ends; this one stays.',
      },
    })
    .input(
      z
        .strictObject({
          currentPassword: z.string().min(1).max(256).optional(),
          password: z.string().min(8, 'a password has at least 8 characters').max(256),
          confirmPassword: z.string().max(256),
        })
        .refine((body) => body.password === body.confirmPassword, {
          message: 'confirmPassword does not match password',
          path: ['confirmPassword'],
        }),
    )
    .output(statusOk)
    .mutation(async ({ ctx, input }) => {
      const user = await ctx.em.findOneOrFail(User, ctx.user.id, { populate: ['passwordHash'] });
      if (user.passwordHash) {
        // Guessing the current password with a stolen session counts like guessing it at login.
        await enforceRateLimit(ctx.em, ctx.deps.config, 'POST /api/auth/password', { ip: rateLimitAddress(ctx.req), account: user.email });
        if (!input.currentPassword || !(await verifyPassword(user.passwordHash, input.currentPassword))) {
          throw new BadRequest('invalid_password', 'currentPassword is wrong', {
            issues: [{ path: ['currentPassword'], message: 'wrong password', code: 'invalid_password' }],
          });
        }
        await clearAccountRateLimit(ctx.em, 'login', user.email, rateLimitAddress(ctx.req));
      }
      user.passwordHash = await hashPassword(input.password);
      await ctx.em.flush();
      await revokeSessions(ctx.em, user.id, ctx.subject.session.id);
      return { status: 'ok' as const };
    }),
});
