import { z } from 'zod';
import { User } from '../../../db/entities/index.ts';
import { BadRequest } from '../../errors.ts';
import { canSeeUserEmails } from '../../permissions/permissions.ts';
import { isUuid } from '../../projects/projectRepository.ts';
import { iso, pagination } from '../../wireShapes.ts';
import { publicProcedure, router } from '../base.ts';
import type { Context } from '../context.ts';

const publicUser = z.object({
  id: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  email: z.string().optional(),
  created: z.string().optional(),
});

/**
 * Creation time is shown to signed-in callers (spec 2, User); e-mail, which the spec also gives
 * them, only to those the permission module lets see it (a verified account, by session or full
 * key). Others get the user without the field: `email` is optional in the output schema, as it
 * is for anonymous callers.
 */
function present(ctx: Context, user: User) {
  const signedIn = ctx.subject.kind === 'session' || ctx.subject.kind === 'apiKey';
  return {
    id: user.id,
    firstName: user.firstName,
    lastName: user.lastName,
    ...(canSeeUserEmails(ctx.subject) ? { email: user.email } : {}),
    ...(signedIn ? { created: iso(user.created) } : {}),
  };
}

const tags = ['users'];

export const usersRouter = router({
  list: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/api/users', tags, summary: 'List users' } })
    .input(z.strictObject({ ...pagination }))
    .output(z.array(publicUser))
    .query(async ({ ctx, input }) => {
      const users = await ctx.em.find(User, {}, { orderBy: { created: 'asc', id: 'asc' }, limit: input.limit, offset: input.offset });
      return users.map((user) => present(ctx, user));
    }),

  get: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/api/users/{id}', tags, summary: 'One user' } })
    .input(z.strictObject({ id: z.string().max(100) }))
    .output(publicUser)
    .query(async ({ ctx, input }) => {
      const user = isUuid(input.id) ? await ctx.em.findOne(User, { id: input.id.toLowerCase() }) : null;
      // The spec's own shape for this case: HTTP 400 naming the id.
      if (!user) throw new BadRequest('user_not_found', `User ${input.id} does not exist`);
      return present(ctx, user);
    }),
});
