import { z } from 'zod';
import { checkDependencies } from '../../infra/dependencyChecks.ts';
import { publicProcedure, router } from '../base.ts';

export const API_VERSION = '2026-11-22';

export const rootRouter = router({
  info: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/api', tags: ['root'], summary: 'API version and the authenticated subject' } })
    .input(z.strictObject({}).optional())
    .output(
      z.object({
        name: z.string(),
        version: z.string(),
        subject: z
          .object({
            type: z.enum(['user', 'apiKey']),
            userId: z.string(),
            email: z.string(),
            emailVerified: z.boolean(),
            apiKeyId: z.string().optional(),
          })
          .nullable(),
      }),
    )
    .query(({ ctx }) => {
      const { subject } = ctx;
      const base = { name: 'browserflow', version: API_VERSION };
      if (subject.kind === 'session') {
        return {
          ...base,
          subject: { type: 'user' as const, userId: subject.user.id, email: subject.user.email, emailVerified: subject.user.emailVerified },
        };
      }
      if (subject.kind === 'apiKey') {
        return {
          ...base,
          subject: {
            type: 'apiKey' as const,
            userId: subject.user.id,
            email: subject.user.email,
            emailVerified: subject.user.emailVerified,
            apiKeyId: subject.apiKey.id,
          },
        };
      }
      return { ...base, subject: null };
    }),
  health: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/health',
        tags: ['root'],
        summary: 'Whether the database and the workflow engine answer, each within its bound (503 with Retry-After when one does not)',
      },
    })
    .input(z.strictObject({}).optional())
    .output(z.object({ status: z.literal('ok'), database: z.literal('ok'), engine: z.literal('ok') }))
    .query(({ ctx }) => checkDependencies(ctx.deps)),
});
