import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../server/appDeps.ts';
import { documentRoutes, type FromTheRoutes, fastifyPath, type RawApp, rawRouteGroup, routesOf } from '../../server/http/rawRoute.ts';
import { rawRoutes } from '../../server/http/routes.ts';

/** A raw route is declared once (server/http/rawRoute.ts): served and documented from the same declaration. */

const route = routesOf<{ greeting: string }>();
const group = rawRouteGroup(
  () => ({ greeting: 'hello' }),
  [
    route({
      method: 'GET',
      path: '/{project}/api/things/{thingId}',
      doc: {
        operationId: 'things-get',
        summary: 'A thing',
        tags: ['things'],
        pathParameters: { thingId: { description: 'Its id', schema: { type: 'string', format: 'uuid' } } },
        parameters: [{ name: 'verbose', in: 'query', schema: { type: 'boolean' } }],
        responses: { '200': { description: 'The thing' } },
      },
      serve:
        ({ greeting }) =>
        async (req) => ({ greeting, project: req.params.project, thingId: req.params.thingId }),
    }),
    route({
      method: 'POST',
      path: '/api/hooks/{token}/ping',
      servedAt: { path: '/api/hooks/{token}/*', anyMethod: true },
      body: 'bytes',
      doc: { operationId: 'hooks-ping', summary: 'A ping', tags: ['hooks'], responses: { '200': { description: 'pong' } } },
      serve: () => async (req, reply) => {
        if (req.method !== 'POST') return reply.callNotFound();
        return { token: req.params.token, bytes: Buffer.isBuffer(req.body) ? req.body.length : 'parsed' };
      },
    }),
    route({ method: 'GET', path: '/undocumented.js', serve: () => async () => 'script' }),
  ],
);

const app = Fastify({ logger: false });
beforeAll(async () => {
  await group.register(app as unknown as RawApp, {} as AppDeps, {} as FromTheRoutes);
  await app.ready();
});
afterAll(() => app.close());

describe('a raw route declared once', () => {
  it('is served at its path with `{name}` read as a Fastify parameter, its handler given what its group shares', async () => {
    const answer = await app.inject({ method: 'GET', url: '/acme/api/things/t1' });
    expect(answer.json()).toEqual({ greeting: 'hello', project: 'acme', thingId: 't1' });
    expect(fastifyPath('/{project}/api/things/{thingId}')).toBe('/:project/api/things/:thingId');
  });

  it('served wider than its path answers every method there, and a bytes body arrives untouched', async () => {
    const posted = await app.inject({
      method: 'POST',
      url: '/api/hooks/s3cret/ping',
      payload: '{"a":1}',
      headers: { 'content-type': 'application/json' },
    });
    expect(posted.json()).toEqual({ token: 's3cret', bytes: 7 });
    // Its own refusal, the 404 of no route, never a 405 naming the route.
    expect((await app.inject({ method: 'GET', url: '/api/hooks/s3cret/ping' })).statusCode).toBe(404);
  });

  it('is documented with its path parameters made from its path, first and in order, then its own parameters', () => {
    const paths = documentRoutes(group.routes);
    expect(Object.keys(paths)).toEqual(['/{project}/api/things/{thingId}', '/api/hooks/{token}/ping']);
    expect(paths['/{project}/api/things/{thingId}']?.get?.parameters).toEqual([
      { name: 'project', in: 'path', required: true, schema: { type: 'string' } },
      { name: 'thingId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' }, description: 'Its id' },
      { name: 'verbose', in: 'query', schema: { type: 'boolean' } },
    ]);
    expect(paths['/api/hooks/{token}/ping']?.post).toMatchObject({
      operationId: 'hooks-ping',
      parameters: [{ name: 'token', in: 'path', required: true, schema: { type: 'string' } }],
    });
  });
});

describe("the service's raw routes", () => {
  const routes = rawRoutes.flatMap((listed) => listed.routes);

  it('write no path parameter by hand, and each operation has an id of its own', () => {
    const handWritten = routes.filter((declared) => declared.doc?.parameters?.some((parameter) => parameter.in === 'path'));
    expect(handWritten.map((declared) => declared.path)).toEqual([]);
    const ids = routes.flatMap((declared) => (declared.doc ? [declared.doc.operationId] : []));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('name only parameters their path has', () => {
    for (const declared of routes) {
      const inPath = [...declared.path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => name);
      for (const name of Object.keys(declared.doc?.pathParameters ?? {})) expect(inPath, declared.path).toContain(name);
    }
  });
});
