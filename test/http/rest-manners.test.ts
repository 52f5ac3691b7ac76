import { initTRPC } from '@trpc/server';
import Fastify, { type FastifyReply } from 'fastify';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errorBody, restErrorBody } from '../../server/errors.ts';
import { registerRestRoutes } from '../../server/http/restRoutes.ts';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let owner: Awaited<ReturnType<typeof registerUser>>;
let privateSlug: string;

beforeAll(async () => {
  stack = await startTestStack();
  owner = await registerUser(stack);
  privateSlug = (await createProject(stack, owner.token, { public: false })).slug;
});

afterAll(async () => {
  await stack?.close();
});

describe('REST manners', () => {
  it('a wrong method on a known path answers 405 with allow', async () => {
    const response = await stack.http.request('POST', `/${privateSlug}/api/sessions`, { body: {}, as: { token: owner.token } });
    expect(response.status, response.text).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, PUT');
    expect(response.body).toEqual({
      status: 'error',
      code: 'method_not_allowed',
      message: `POST is not allowed on /${privateSlug}/api/sessions; use GET or PUT`,
    });
  });

  it('a wrong method on a raw route answers 405 too', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const response = await stack.http.request('DELETE', `/${privateSlug}/api/pipelines/${id}/${id}/logs`, { as: { token: owner.token } });
    expect(response.status, response.text).toBe(405);
    expect(response.headers.get('allow')).toBe('GET');
    expect(response.body.code).toBe('method_not_allowed');
  });

  it('an unknown path still answers 404', async () => {
    const response = await stack.http.request('POST', '/api/no-such-thing', { body: {}, as: { token: owner.token } });
    expect(response.status, response.text).toBe(404);
    expect(response.body.code).toBe('not_found');
  });

  it('a private project asked without credentials says no credentials were sent', async () => {
    const response = await stack.http.get(`/${privateSlug}/api`);
    expect(response.status, response.text).toBe(404);
    expect(response.body.code).toBe('not_found');
    expect(response.body.message).toMatch(/no credentials were sent/);
    // The same words for a project that does not exist: the answer reveals nothing.
    const missing = await stack.http.get('/no-such-project-here/api');
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe(response.body.message);
  });

  it('a private project asked with someone else’s key says only that it is not found', async () => {
    const other = await registerUser(stack);
    const key = await createApiKey(stack, other.token, { accessType: 'full' });
    const response = await stack.http.get(`/${privateSlug}/api`, { apiKey: key.secret });
    expect(response.status, response.text).toBe(404);
    expect(response.body.message).toBe('Project not found');
  });

  it('the OpenAPI document names the 405 and the no-credentials 404, and every operation has an id', async () => {
    const document = (await stack.http.get('/api/openapi.json')).body;
    expect(document.components.schemas.Error405.properties.code.enum).toEqual(['method_not_allowed']);
    expect(document.components.responses.Error405.description).toMatch(/Allow/);
    expect(document.components.responses.Error404.description).toMatch(/no credentials were sent/);
    const ids: string[] = [];
    for (const item of Object.values(document.paths) as Record<string, { operationId?: string }>[]) {
      for (const method of ['get', 'put', 'post', 'patch', 'delete']) if (item[method]) ids.push(item[method].operationId as string);
    }
    expect(ids.every((id) => typeof id === 'string' && /^[a-zA-Z][a-zA-Z0-9-]*$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('a missing field is named in plain words', async () => {
    const response = await stack.http.put('/api/projects', { slug: 'plain-words' }, { token: owner.token });
    expect(response.status, response.text).toBe(400);
    expect(response.body.code).toBe('invalid_input');
    expect(response.body.message).toContain('name: required');
    expect(response.body.message).not.toMatch(/expected|received/);
    expect(response.body.issues).toContainEqual(expect.objectContaining({ path: ['name'], message: 'required' }));
  });

  it('a field of the wrong type says what it must be', async () => {
    const response = await stack.http.put('/api/projects', { name: 5, slug: 'plain-words-2' }, { token: owner.token });
    expect(response.status, response.text).toBe(400);
    expect(response.body.message).toContain('name: must be text');
  });

  it('an unknown field is named as such', async () => {
    const response = await stack.http.put('/api/projects', { name: 'x', slug: 'plain-words-3', colour: 'red' }, { token: owner.token });
    expect(response.status, response.text).toBe(400);
    expect(response.body.message).toContain('colour: not a known field');
  });
});

describe('the REST routes', () => {
  it('keep a 2xx status a procedure set on the reply', async () => {
    const t = initTRPC.context<{ reply: FastifyReply }>().meta<OpenApiMeta>().create();
    const router = t.router({
      start: t.procedure
        .meta({ openapi: { method: 'POST', path: '/things/{id}/start' } })
        .input(z.object({ id: z.string() }))
        .output(z.object({ id: z.string(), state: z.string() }))
        .mutation(({ ctx, input }) => {
          ctx.reply.code(202);
          return { id: input.id, state: 'running' };
        }),
    });
    const app = Fastify({ logger: false });
    registerRestRoutes(app, {
      router,
      createContext: (_req, reply) => ({ reply }),
      errorBody: restErrorBody,
      routeErrorBody: (status, message) => errorBody(status === 405 ? 'method_not_allowed' : 'not_found', message),
    });
    try {
      const response = await app.inject({
        method: 'POST',
        url: '/things/a1/start',
        headers: { 'content-type': 'application/json' },
        payload: '{}',
      });
      expect(response.statusCode, response.body).toBe(202);
      expect(response.json()).toEqual({ id: 'a1', state: 'running' });
    } finally {
      await app.close();
    }
  });
});
