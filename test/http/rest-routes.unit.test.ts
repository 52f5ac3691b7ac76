import { initTRPC } from '@trpc/server';
import Fastify from 'fastify';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errorBody, restErrorBody } from '../../server/errors.ts';
import { registerRestRoutes } from '../../server/http/restRoutes.ts';

/** The REST routes' own caller (server/http/restRoutes.ts), on a router of its own. */
class Caller {
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
  get greeting() {
    return `hello ${this.name}`;
  }
}

const t = initTRPC.context<Caller>().meta<OpenApiMeta>().create();
const named = t.procedure.use(({ next }) => next({ ctx: { title: 'Dr' } }));
const app = Fastify({ logger: false });
registerRestRoutes(app, {
  router: t.router({
    echo: named
      .meta({ openapi: { method: 'GET', path: '/{project}/api/echo' } })
      .input(z.strictObject({ project: z.string(), loud: z.coerce.boolean().optional() }))
      .output(z.object({ project: z.string(), greeting: z.string(), title: z.string(), at: z.coerce.date() }))
      // An extra field the output schema strips, and a date string it turns into a Date.
      .query(({ ctx, input }) => ({
        project: input.project,
        greeting: ctx.greeting,
        title: ctx.title,
        extra: 1,
        at: '2026-11-28T12:00:00Z',
      })),
    broken: t.procedure
      .meta({ openapi: { method: 'GET', path: '/{project}/api/broken' } })
      .input(z.strictObject({ project: z.string() }))
      .output(z.object({ count: z.number() }))
      .query(() => ({ count: 'many' }) as unknown as { count: number }),
  }),
  createContext: () => new Caller('Ada'),
  errorBody: restErrorBody,
  routeErrorBody: (status, message) => errorBody(status === 405 ? 'method_not_allowed' : 'not_found', message),
});

beforeAll(() => app.ready());
afterAll(() => app.close());

describe('a REST route calling its procedure', () => {
  it('answers the output as its schema reads it, with a middleware’s context merged and the caller’s getters kept', async () => {
    const answer = await app.inject({ url: '/p1/api/echo' });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json()).toEqual({ project: 'p1', greeting: 'hello Ada', title: 'Dr', at: '2026-11-28T12:00:00.000Z' });
  });

  it('answers 500 in the API’s error body when the procedure’s answer does not fit its output schema', async () => {
    const answer = await app.inject({ url: '/p1/api/broken' });
    expect(answer.statusCode).toBe(500);
    expect(answer.json()).toEqual({ status: 'error', code: 'internal_server_error', message: 'Internal server error' });
    expect(answer.body).not.toContain('many');
  });
});
